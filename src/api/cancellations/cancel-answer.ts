import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { App, AppEnv } from '../context.js';
import { emptyOk } from '../http/typed-responses.js';
import { IdempotencyHeadersSchema } from './idempotency.js';

/**
 * How a cancel route answers once its job is stored. The interface's answer is the default: `200`, an
 * empty body and the job id in X-Job-Id. A caller that asks for it (`Prefer: return=representation`,
 * RFC 7240) gets the id in a JSON body as well.
 */

/** The body of a cancel's 200 under `Prefer: return=representation`. */
const CancelAcceptedSchema = z
  .object({
    jobId: z.string().openapi({
      description: 'Id of the cancellation job, the same as X-Job-Id; see POST /api/v1/integration/jobs/status',
      example: '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f',
    }),
  })
  .openapi('CancelAccepted');

/**
 * What a cancel route answers once its job is stored. Typed as the route's contentless 200: OpenAPI
 * gives one status one declaration, and the JSON body is the exception a caller asks for.
 */
export type AcceptedOk = ReturnType<typeof emptyOk>;

/** The headers of the three cancel routes: Idempotency-Key, and Prefer for a body with the job id. */
export const CancelHeadersSchema = IdempotencyHeadersSchema.extend({
  prefer: z
    .string()
    .optional()
    .openapi({
      description:
        'RFC 7240 preferences, comma-separated, case-insensitive; only `return` is read. ' +
        '`return=representation`: the 200 carries `{"jobId": ...}` as application/json (schema CancelAccepted) ' +
        'and `Preference-Applied: return=representation`. `return=minimal`: the empty 200, with ' +
        '`Preference-Applied: return=minimal`. Without a `return` preference: the empty 200 of the interface. ' +
        'Other preferences are ignored. A dry run answers its counts whatever this says.',
      example: 'return=representation',
    }),
});

type ReturnPreference = 'representation' | 'minimal';

/**
 * The `return` preference of a Prefer header (RFC 7240 §2, §4): preferences are comma-separated, each a
 * name with an optional `=value` (spaces around `=` allowed, the value possibly quoted) and optional
 * `;parameters`; names and, here, values are compared case-insensitively. When `return` appears more
 * than once, the first counts (§2). A value other than the two defined ones is ignored.
 */
function returnPreference(prefer: string | undefined): ReturnPreference | undefined {
  if (prefer === undefined) return undefined;
  for (const preference of prefer.split(',')) {
    const [nameAndValue = ''] = preference.split(';');
    const separator = nameAndValue.indexOf('=');
    const name = (separator === -1 ? nameAndValue : nameAndValue.slice(0, separator)).trim().toLowerCase();
    if (name !== 'return') continue;
    const value = separator === -1 ? '' : nameAndValue.slice(separator + 1).trim();
    const unquoted = (value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value).toLowerCase();
    return unquoted === 'representation' || unquoted === 'minimal' ? unquoted : undefined;
  }
  return undefined;
}

/** The 200 of a stored (or replayed) cancel: empty with X-Job-Id, or `{jobId}` when the caller prefers it. */
export function accepted(c: Context<AppEnv>, jobId: string): AcceptedOk {
  c.set('jobId', jobId);
  c.header('X-Job-Id', jobId);
  const preference = returnPreference(c.req.header('prefer'));
  if (preference !== undefined) c.header('Preference-Applied', `return=${preference}`);
  if (preference === 'representation') return c.json({ jobId }, 200) as unknown as AcceptedOk;
  return emptyOk(c);
}

const ref = (schema: string) => ({ $ref: `#/components/schemas/${schema}` });

/** A body the 200 carries only when the request asks for it; kept in the components under `name`. */
export interface RequestedBody {
  /** What in the request asks for it. */
  when: string;
  name: string;
  schema: z.ZodType;
  /** One sentence for the 200's description. */
  description: string;
}

const representation: RequestedBody = {
  when: 'Prefer: return=representation',
  name: 'CancelAccepted',
  schema: CancelAcceptedSchema,
  description:
    'With `Prefer: return=representation`, the body is `{"jobId": ...}` as application/json (schema ' +
    'CancelAccepted) and `Preference-Applied: return=representation` is sent.',
};

/**
 * The 200 of a cancel route, declared as the contentless answer it is by default: a generated client or
 * a fuzzer then takes an empty body without Content-Type as the valid answer, and a JSON body (asked
 * for) is not checked against a media type no one told it of. The bodies a request can ask for are
 * named in `x-content-on-request` (each with what asks for it and its schema, registered in the
 * components under its name) and in the description.
 */
export function acceptedResponse(app: App, dryRun?: RequestedBody) {
  const bodies = dryRun === undefined ? [representation] : [representation, dryRun];
  for (const body of bodies) app.openAPIRegistry.register(body.name, body.schema);
  return {
    description: [
      'Accepted: the job is stored and will run. The answer of the interface: an empty body (Content-Length: 0, ' +
        'no Content-Type), the job id in X-Job-Id.',
      ...bodies.map((body) => body.description),
      'A repeat under the same Idempotency-Key, or a version-2 request sent again with the same X-Signature, ' +
        "answers the first request's job id, in the form this request asks for, with Idempotent-Replayed: true.",
    ].join(' '),
    headers: {
      'X-Job-Id': {
        description: 'Id of the cancellation job; see POST /api/v1/integration/jobs/status',
        // A dry run stores no job: the header is required only where every 200 names one.
        required: dryRun === undefined,
        schema: { type: 'string' as const, format: 'uuid' },
      },
      'Preference-Applied': {
        description: 'The `return` preference of the request, when it sent one (RFC 7240)',
        schema: { type: 'string' as const, enum: ['return=representation', 'return=minimal'] },
      },
      'Idempotent-Replayed': {
        description: 'true when this answer repeats an earlier request (same Idempotency-Key, or same X-Signature)',
        schema: { type: 'string' as const, enum: ['true'] },
      },
    },
    'x-content-on-request': bodies.map(({ when, name }) => ({
      when,
      content: { 'application/json': { schema: ref(name) } },
    })),
  };
}
