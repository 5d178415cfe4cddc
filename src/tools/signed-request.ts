import { parseArgs } from 'node:util';
import { DEMO_MERCHANT } from '../seed/demo-data.js';
import { signMessage } from '../shared/signature.js';

/** What `npm run sign` prints: the signed fields first, then the caller's extra fields. */
export type SignedFields = { merchantId: string; timestamp: number; hash: string } & Record<string, unknown>;

export function buildSignedFields(
  merchantId: string,
  secretKey: string,
  timestamp: number,
  extra: Record<string, unknown> = {},
): SignedFields {
  return { merchantId, timestamp, hash: signMessage(merchantId, timestamp, secretKey), ...extra };
}

/** For GET /betSlip: the same fields as a query string. Only flat values fit in one. */
export function toQueryString(fields: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw new TypeError(`field '${key}' is not a string, number or boolean, so it cannot go in a query string`);
    }
    params.append(key, String(value));
  }
  return params.toString();
}

export interface SignRequest {
  merchantId: string;
  secretKey: string;
  timestamp: number;
  extra: Record<string, unknown>;
  query: boolean;
}

export type SignCommand =
  | { kind: 'help' }
  | { kind: 'sign'; request: SignRequest }
  | { kind: 'invalid'; message: string };

export const SIGN_USAGE = `Usage: npm run --silent sign -- [--merchant-id <uuid>] [--secret <secret>] [--body '<json object>']
                                [--timestamp <epoch ms>] [--query]

Prints {"merchantId":…,"timestamp":<now>,"hash":…,…extra fields} on one line, signed as docs/interface.md says
(HMAC-SHA256 of merchantId followed by timestamp, hex). Without --merchant-id and --secret it signs as
the demo merchant that \`npm run seed\` creates (${DEMO_MERCHANT.id}).
  --body '<json>'   extra fields to add, e.g. '{"externalId":"demo-reward-1"}'
  --timestamp <ms>  sign this timestamp instead of now
  --query           print a URL query string instead (for GET /betSlip)

Example:
  curl -s localhost:3000/api/v1/integration/reward-configurations/readAll \\
    -H 'content-type: application/json' -d "$(npm run --silent sign)"
`;

const RESERVED_FIELDS = ['merchantId', 'timestamp', 'hash'];

export function parseSignArgs(argv: readonly string[], now: number): SignCommand {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        help: { type: 'boolean', short: 'h' },
        'merchant-id': { type: 'string' },
        secret: { type: 'string' },
        body: { type: 'string' },
        timestamp: { type: 'string' },
        query: { type: 'boolean' },
      },
    }));
  } catch (error) {
    return { kind: 'invalid', message: error instanceof Error ? error.message : String(error) };
  }
  if (values.help) return { kind: 'help' };

  const merchantId = (values['merchant-id'] as string | undefined) ?? DEMO_MERCHANT.id;
  const secretKey = (values.secret as string | undefined) ?? DEMO_MERCHANT.secretKey;
  if (merchantId === '') return { kind: 'invalid', message: '--merchant-id must not be empty' };
  if (secretKey === '') return { kind: 'invalid', message: '--secret must not be empty' };

  let timestamp = now;
  if (values.timestamp !== undefined) {
    const raw = String(values.timestamp);
    timestamp = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(timestamp)) {
      return { kind: 'invalid', message: `--timestamp must be epoch milliseconds (digits), got '${raw}'` };
    }
  }

  let extra: Record<string, unknown> = {};
  if (values.body !== undefined) {
    const parsed = parseJsonObject(String(values.body));
    if (typeof parsed === 'string') return { kind: 'invalid', message: parsed };
    const clash = RESERVED_FIELDS.find((field) => field in parsed);
    if (clash) return { kind: 'invalid', message: `--body must not contain '${clash}': the signer sets it` };
    extra = parsed;
  }

  return { kind: 'sign', request: { merchantId, secretKey, timestamp, extra, query: values.query === true } };
}

/** The object, or a message saying why the text is not one. */
function parseJsonObject(text: string): Record<string, unknown> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return `--body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return '--body must be a JSON object';
  return parsed as Record<string, unknown>;
}

/** The line `npm run sign` prints, or throws TypeError when --query meets a nested field. */
export function renderSignedRequest(request: SignRequest): string {
  const fields = buildSignedFields(request.merchantId, request.secretKey, request.timestamp, request.extra);
  return request.query ? toQueryString(fields) : JSON.stringify(fields);
}
