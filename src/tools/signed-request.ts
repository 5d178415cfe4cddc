import { SIGNATURE_HEADER, signatureHeaderValue, signMessage } from '../api/auth/signature.js';
import { type CommandLine, type FlagValues, parseCommandLine, parseWholeNumber } from './command-line.js';
import { DEMO_MERCHANT } from './seed/demo-data.js';

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
  /** Version 2: also sign this method and path (the query string, for --query, is appended). */
  bodyBound: { method: string; path: string; headerOnly: boolean } | null;
}

export type SignCommand = CommandLine<{ kind: 'sign'; request: SignRequest }>;

export const SIGN_USAGE = `Usage: npm run --silent sign -- [--merchant-id <uuid>] [--secret <secret>] [--body '<json object>']
                                [--timestamp <epoch ms>] [--query]
                                [--v2 --path <path> [--method <method>] [--curl-header]]

Prints {"merchantId":…,"timestamp":<now>,"hash":…,…extra fields} on one line, signed as docs/interface.md says
(HMAC-SHA256 of merchantId followed by timestamp, hex). Without --merchant-id and --secret it signs as
the demo merchant that \`npm run seed\` creates (${DEMO_MERCHANT.id}).
  --body '<json>'   extra fields to add, e.g. '{"externalId":"demo-reward-1"}'
  --timestamp <ms>  sign this timestamp instead of now
  --query           print a URL query string instead (for GET /betSlip)

Signature version 2 (merchants the admin switched to it; docs/interface.md, "Signature version 2"):
  --v2              print a second line, the header 'X-Signature: t=<timestamp>,v1=<hex>', which signs
                    the method, the path with query and the body of the first line, byte for byte
  --path <path>     the request path, e.g. /api/v1/integration/rewards/cancel (required with --v2);
                    with --query the printed query string is appended to it
  --method <method> POST by default, GET with --query
  --curl-header     print only the header line (use --timestamp to pair it with a body printed before)

Examples:
  curl -s localhost:3000/api/v1/integration/reward-configurations/readAll \\
    -H 'content-type: application/json' -d "$(npm run --silent sign)"

  { read -r body; read -r header; } < <(npm run --silent sign -- --v2 \\
      --path /api/v1/integration/reward-configurations/readAll)
  curl -s localhost:3000/api/v1/integration/reward-configurations/readAll \\
    -H 'content-type: application/json' -H "$header" -d "$body"
`;

const RESERVED_FIELDS = ['merchantId', 'timestamp', 'hash'];

const signFlags = {
  'merchant-id': { type: 'string' },
  secret: { type: 'string' },
  body: { type: 'string' },
  timestamp: { type: 'string' },
  query: { type: 'boolean' },
  v2: { type: 'boolean' },
  path: { type: 'string' },
  method: { type: 'string' },
  'curl-header': { type: 'boolean' },
} as const;

export function parseSignArgs(argv: readonly string[], now: number): SignCommand {
  return parseCommandLine(argv, signFlags, (values) => toSignCommand(values, now));
}

function toSignCommand(values: FlagValues, now: number): SignCommand {
  const merchantId = (values['merchant-id'] as string | undefined) ?? DEMO_MERCHANT.id;
  const secretKey = (values.secret as string | undefined) ?? DEMO_MERCHANT.secretKey;
  if (merchantId === '') return { kind: 'invalid', message: '--merchant-id must not be empty' };
  if (secretKey === '') return { kind: 'invalid', message: '--secret must not be empty' };

  let timestamp = now;
  if (values.timestamp !== undefined) {
    const raw = String(values.timestamp);
    const parsed = parseWholeNumber(raw);
    if (parsed === null) {
      return { kind: 'invalid', message: `--timestamp must be epoch milliseconds (digits), got '${raw}'` };
    }
    timestamp = parsed;
  }

  let extra: Record<string, unknown> = {};
  if (values.body !== undefined) {
    const parsed = parseJsonObject(String(values.body));
    if (typeof parsed === 'string') return { kind: 'invalid', message: parsed };
    const clash = RESERVED_FIELDS.find((field) => field in parsed);
    if (clash) return { kind: 'invalid', message: `--body must not contain '${clash}': the signer sets it` };
    extra = parsed;
  }

  const query = values.query === true;
  const bodyBound = parseBodyBound(values, query);
  if (typeof bodyBound === 'string') return { kind: 'invalid', message: bodyBound };
  return { kind: 'sign', request: { merchantId, secretKey, timestamp, extra, query, bodyBound } };
}

/** The version-2 part of the request, null without --v2, or a message saying what is wrong. */
function parseBodyBound(values: FlagValues, query: boolean): SignRequest['bodyBound'] | string {
  const path = values.path as string | undefined;
  const method = values.method as string | undefined;
  const headerOnly = values['curl-header'] === true;
  if (values.v2 !== true) {
    if (path !== undefined || method !== undefined || headerOnly) {
      return '--path, --method and --curl-header belong to --v2';
    }
    return null;
  }
  if (path === undefined) return '--v2 needs --path, the path the request goes to (e.g. /betSlip)';
  if (!path.startsWith('/')) return `--path must start with '/', got '${path}'`;
  if (query && path.includes('?')) return '--path must not hold a query string with --query: the signer makes it';
  if (method !== undefined && !/^[A-Za-z]+$/.test(method)) return `--method must be an HTTP method, got '${method}'`;
  return { method: (method ?? (query ? 'GET' : 'POST')).toUpperCase(), path, headerOnly };
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

/**
 * What `npm run sign` prints (without its final newline): the body or query string, and with --v2 a
 * second line `X-Signature: …` over exactly that text. Throws TypeError when --query meets a nested
 * field.
 */
export function renderSignedRequest(request: SignRequest): string {
  const fields = buildSignedFields(request.merchantId, request.secretKey, request.timestamp, request.extra);
  const printed = request.query ? toQueryString(fields) : JSON.stringify(fields);
  if (!request.bodyBound) return printed;
  const { method, path, headerOnly } = request.bodyBound;
  const header = `${SIGNATURE_HEADER}: ${signatureHeaderValue(request.secretKey, request.timestamp, {
    method,
    // The client sends the query string as printed, so the server sees the same text.
    pathWithQuery: request.query ? `${path}?${printed}` : path,
    body: request.query ? '' : printed,
  })}`;
  return headerOnly ? header : `${printed}\n${header}`;
}
