import { DEMO_MERCHANT } from '../seed/demo-data.js';
import { buildSignedFields } from './signed-request.js';

export interface BannerOptions {
  apiBaseUrl: string;
  workerBaseUrl: string;
  adminToken: string;
  /** Whether `npm start` made the token up (then it is shown, to log in to the dashboard). */
  adminTokenGenerated: boolean;
  signatureWindowMs: number;
  now: number;
}

/** What `npm start` prints once the API and the worker are ready: who to be and what to call. */
export function renderBanner(options: BannerOptions): string {
  const { apiBaseUrl, workerBaseUrl, now } = options;
  const sign = (extra: Record<string, unknown> = {}) =>
    shellQuote(JSON.stringify(buildSignedFields(DEMO_MERCHANT.id, DEMO_MERCHANT.secretKey, now, extra)));
  const minutes = Math.round(options.signatureWindowMs / 60_000);
  const token = options.adminTokenGenerated
    ? `${options.adminToken}  (made up for this run; set ADMIN_TOKEN to choose one)`
    : '(your ADMIN_TOKEN)';
  return `
Merchant rewards gateway is running.

  API          ${apiBaseUrl}   (reference: ${apiBaseUrl}/docs)
  worker       ${workerBaseUrl}/readyz, ${workerBaseUrl}/metrics
  dashboard    ${apiBaseUrl}/admin/queues   user: anything, password: the admin token
  admin token  ${token}

Demo merchant
  merchant id  ${DEMO_MERCHANT.id}
  secret key   ${DEMO_MERCHANT.secretKey}

Signed just now (valid for ${minutes} minutes; \`npm run --silent sign -- --body '{…}'\` signs afresh):

  curl -s ${apiBaseUrl}/api/v1/integration/reward-configurations/readAll \\
    -H 'content-type: application/json' -d ${sign()}

  curl -s -i ${apiBaseUrl}/api/v1/integration/rewards/cancel \\
    -H 'content-type: application/json' -d ${sign({ externalId: 'demo-reward-1' })}

\`npm run seed -- --reset\` puts the demo data back as it was. Ctrl-C stops the API and the worker.
`;
}

/** Single quotes for a POSIX shell: the JSON of a signed body never holds one, but be exact anyway. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
