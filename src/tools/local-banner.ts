import { DEMO_MERCHANT } from './seed/demo-data.js';
import { buildSignedFields } from './signed-request.js';

const MINUTE_MS = 60_000;

export interface BannerOptions {
  apiBaseUrl: string;
  /** The admin listener: admin API, queue dashboard, /metrics. */
  adminBaseUrl: string;
  workerBaseUrl: string;
  adminToken: string;
  /** Where `npm start` keeps the token it made (then it is shown, to log in to the dashboard); undefined: the operator's own. */
  adminTokenFile: string | undefined;
  signatureWindowMs: number;
  now: number;
}

/** What `npm start` prints once the API and the worker are ready: who to be and what to call. */
export function renderBanner(options: BannerOptions): string {
  const { apiBaseUrl, adminBaseUrl, workerBaseUrl, now } = options;
  const sign = (extra: Record<string, unknown> = {}) =>
    shellQuote(JSON.stringify(buildSignedFields(DEMO_MERCHANT.id, DEMO_MERCHANT.secretKey, now, extra)));
  const minutes = Math.round(options.signatureWindowMs / MINUTE_MS);
  const token = options.adminTokenFile
    ? `${options.adminToken}  (operator "admin", kept in ${options.adminTokenFile}; set ADMIN_TOKENS to choose)`
    : '(your ADMIN_TOKEN / ADMIN_TOKENS)';
  return `
Merchant rewards gateway is running.

  API          ${apiBaseUrl}   (reference: ${apiBaseUrl}/docs)
  admin plane  ${adminBaseUrl}/admin/v1, ${adminBaseUrl}/metrics   (reference: ${adminBaseUrl}/docs)
  dashboard    ${adminBaseUrl}/admin/queues   user: anything, password: the admin token (read-only)
  worker       ${workerBaseUrl}/readyz, ${workerBaseUrl}/metrics
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
