import { createHash } from 'node:crypto';
import type { DefaultJobOptions } from 'bullmq';
import { z } from 'zod';
import type { Operation } from '../db/schema.js';
import { queueNames } from '../redis/redis-keys.js';
import { identifierSchema, uuidSchema } from '../wire-rules.js';

/**
 * The one catalogue of cancellation jobs: queue names, a schema per job kind, payload types, job id
 * builders and default options. The API builds payloads from it, the worker parses them with it,
 * and the worker refuses to start if a kind has no processor.
 */

const uuid = uuidSchema();
const identifier = identifierSchema();

const jobBase = {
  merchantId: uuid,
  /** The API request that created the job, so its log lines and the worker's can be joined. */
  requestId: z.string().max(128).optional(),
  /** Epoch ms at which the API accepted the request. */
  acceptedAt: z.number().int().nonnegative(),
};

/** Where a long job has got to: saved on the job after each batch so that a retry resumes there. */
const queryCursorSchema = z.object({
  /** Index into the sorted player list of the first player whose slice is not finished. */
  playerIndex: z.number().int().nonnegative(),
  /** Players in the slice that starts there (sized to about one batch of rewards). */
  sliceSize: z.number().int().positive(),
  /** Rewards cancelled in the slices before it. */
  cancelled: z.number().int().nonnegative(),
  /** Rewards seen in those slices, for sizing the next ones. */
  picked: z.number().int().nonnegative(),
});
export type QueryCursor = z.infer<typeof queryCursorSchema>;

/** Set on a bulk job once it has added its child jobs, so a retry does not split it again. */
const fanOutStep = z.enum(['children-added']).optional();

/**
 * A query job walks its players in order, and its saved cursor is an index into that order: so the
 * list is made sorted and distinct here, whoever built the payload.
 */
const sortedPlayerIds = z.array(identifier).transform((ids) => [...new Set(ids)].sort());

/**
 * A split job drops its identifiers once its parts carry them (Redis keeps each identifier once), so
 * after `step: 'children-added'` the lists are empty.
 */
export const bulkCancelJobSchema = z.object({
  ...jobBase,
  ids: z.array(uuid).default([]),
  externalIds: z.array(identifier).default([]),
  step: fanOutStep,
  /** External ids dropped from the parts because the request also names their rewards by id. */
  overlap: z.number().int().nonnegative().optional(),
});

const queryFilterSchema = z.object({
  rewardConfigurationId: uuid.optional(),
  externalRewardConfigurationId: identifier.optional(),
});

export const bulkCancelByQueryJobSchema = z.object({
  ...jobBase,
  ...queryFilterSchema.shape,
  playerIds: sortedPlayerIds.default([]),
  cursor: queryCursorSchema.optional(),
  step: fanOutStep,
});

/**
 * A slice of a split bulk job. It records its work under the id of the job the merchant was given
 * (`rootJobId`), which is also its BullMQ parent.
 */
export const bulkCancelPartJobSchema = z.discriminatedUnion('operation', [
  z.object({
    operation: z.literal('bulkCancel'),
    merchantId: uuid,
    rootJobId: z.string().min(1),
    ids: z.array(uuid),
    externalIds: z.array(identifier),
    /** Parts made before external ids were de-duplicated at split time carried the request's ids here. */
    excludeIds: z.array(uuid).optional(),
  }),
  z.object({
    operation: z.literal('bulkCancelByQuery'),
    merchantId: uuid,
    rootJobId: z.string().min(1),
    ...queryFilterSchema.shape,
    playerIds: sortedPlayerIds,
    cursor: queryCursorSchema.optional(),
  }),
]);

/**
 * Single cancels stored together (api/single-cancels/single-cancel-batcher.ts): each request is a job
 * of the merchant's own (`jobId`, operation `cancel`), the queue job only carries them.
 */
export const cancelBatchJobSchema = z.object({
  merchantId: uuid,
  requests: z
    .array(
      z
        .object({
          jobId: uuid,
          requestId: jobBase.requestId,
          acceptedAt: jobBase.acceptedAt,
          id: uuid.optional(),
          externalId: identifier.optional(),
          /**
           * The request's W3C trace context, absent when it is not sampled: the batch's span and the
           * coalesced write link to it (BullMQ carries one trace per job, and a batch serves many requests).
           */
          traceparent: z.string().max(128).optional(),
        })
        .refine((data) => (data.id === undefined) !== (data.externalId === undefined), {
          message: 'exactly one of id or externalId',
        }),
    )
    .default([]),
});

export const jobCatalogue = {
  cancelBatch: { queue: queueNames.single, schema: cancelBatchJobSchema, operation: null },
  bulkCancel: { queue: queueNames.bulk, schema: bulkCancelJobSchema, operation: 'bulkCancel' },
  bulkCancelByQuery: { queue: queueNames.bulk, schema: bulkCancelByQueryJobSchema, operation: 'bulkCancelByQuery' },
  bulkCancelPart: { queue: queueNames.bulk, schema: bulkCancelPartJobSchema, operation: null },
} as const;

export type JobName = keyof typeof jobCatalogue;
export const jobNames = Object.keys(jobCatalogue) as JobName[];
export type JobPayload<N extends JobName> = z.infer<(typeof jobCatalogue)[N]['schema']>;

/** Counts kept with every job (docs/design.md, "Cancellation semantics"). */
export interface CancelResult {
  requested: number;
  cancelled: number;
  alreadyCancelled: number;
  notCancellable: number;
  notFound: number;
}
export interface QueryCancelResult {
  players: number;
  cancelled: number;
}
export type JobResult = CancelResult | QueryCancelResult;

/** Child jobs get ids derived from their parent, so re-adding the same split is a no-op. */
export function partJobId(rootJobId: string, index: number): string {
  return `${rootJobId}.part-${index}`;
}

/**
 * Identical requests (same merchant, operation and set of identifiers in any order) share one
 * waiting job: this is the key they share.
 */
export function deduplicationKey(
  merchantId: string,
  operation: Operation,
  identifiers: Record<string, readonly string[] | string | undefined>,
): string {
  const hash = createHash('sha256').update(merchantId).update('\0').update(operation);
  for (const name of Object.keys(identifiers).sort()) {
    const value = identifiers[name];
    if (value === undefined) continue;
    const parts = typeof value === 'string' ? [value] : sortedDistinct(value);
    // Length-prefixed, so no choice of characters inside an identifier can make two lists look alike.
    // One update per list: 10,000 calls into the hash cost more than building the string once.
    hash.update('\0').update(name);
    hash.update(parts.map((part) => `\0${part.length}:${part}`).join(''));
  }
  return `${operation}-${hash.digest('hex')}`;
}

/** The list sorted without repeats; a list that already is (routes sort what they queue) is used as it is. */
function sortedDistinct(values: readonly string[]): readonly string[] {
  for (let index = 1; index < values.length; index++) {
    if ((values[index - 1] as string) >= (values[index] as string)) return [...new Set(values)].sort();
  }
  return values;
}

const HOUR_SECONDS = 60 * 60;
const DAY_SECONDS = 24 * HOUR_SECONDS;

/**
 * Retention in Redis, sized in jobs and bytes. A finished job keeps only its small data (who asked;
 * its identifiers are dropped when it finishes) and its counts: about 1 KB. Completed jobs: at most
 * 10,000 per queue for at most an hour (≈ 10 MB per queue); failed jobs: at most 10,000 per queue for
 * 7 days (≈ 10 MB). Job status reads the audit table in Postgres once Redis has forgotten a job. These
 * ages may outlast RETENTION_MS (down to a minute): job status then answers a job finished longer ago
 * than RETENTION_MS as not found, whichever of the two still holds it (api/jobs/job-status.ts).
 */
const retention = {
  completed: { age: HOUR_SECONDS, count: 10_000 },
  failed: { age: 7 * DAY_SECONDS, count: 10_000 },
} as const;

/**
 * The wait before a failed job's first retry, doubled at each further one: a passing failure gets its
 * second try soon, and the eight attempts span about two minutes, long enough to outlast a brief trouble.
 */
const FIRST_RETRY_DELAY_MS = 1_000;

export const defaultJobOptions: DefaultJobOptions = {
  // Attempts are used only by failures that may be the job's own (a database outage, a deadlock or a
  // killed worker does not use one: see workers.ts).
  attempts: 8,
  // 1 s, 2 s, 4 s … with jitter, so that retries do not arrive together.
  backoff: { type: 'exponential', delay: FIRST_RETRY_DELAY_MS, jitter: 0.5 },
  removeOnComplete: retention.completed,
  removeOnFail: retention.failed,
};
