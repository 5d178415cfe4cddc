import { createHash, randomUUID } from 'node:crypto';
import type { DefaultJobOptions } from 'bullmq';
import { z } from 'zod';
import { identifierSchema, uuidSchema } from '../wire-rules.js';

/**
 * The one catalogue of cancellation jobs: queue names, a schema per job kind, payload types, job id
 * builders and default options. The API builds payloads from it, the worker parses them with it,
 * and the worker refuses to start if a kind has no processor.
 */

export const queueNames = {
  /** Single `cancel` requests: many small jobs, coalesced by the worker. */
  single: 'cancel',
  /** bulkCancel, bulkCancelByQuery, and the child jobs that split them across workers. */
  bulk: 'bulk-cancel',
} as const;
export type QueueName = (typeof queueNames)[keyof typeof queueNames];

export const operations = ['cancel', 'bulkCancel', 'bulkCancelByQuery'] as const;
export type Operation = (typeof operations)[number];

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
export const queryCursorSchema = z.object({
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

export const cancelJobSchema = z
  .object({
    ...jobBase,
    id: uuid.optional(),
    externalId: identifier.optional(),
  })
  .refine((data) => (data.id === undefined) !== (data.externalId === undefined), {
    message: 'exactly one of id or externalId',
  });

/** Set on a bulk job once it has added its child jobs, so a retry does not split it again. */
const fanOutStep = z.enum(['children-added']).optional();

export const bulkCancelJobSchema = z.object({
  ...jobBase,
  ids: z.array(uuid),
  externalIds: z.array(identifier),
  step: fanOutStep,
});

export const queryFilterSchema = z.object({
  rewardConfigurationId: uuid.optional(),
  externalRewardConfigurationId: identifier.optional(),
});

export const bulkCancelByQueryJobSchema = z.object({
  ...jobBase,
  ...queryFilterSchema.shape,
  playerIds: z.array(identifier),
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
    /** Rewards the request also names by id: an external-id part leaves them to the id parts, so each counts once. */
    excludeIds: z.array(uuid).optional(),
  }),
  z.object({
    operation: z.literal('bulkCancelByQuery'),
    merchantId: uuid,
    rootJobId: z.string().min(1),
    ...queryFilterSchema.shape,
    playerIds: z.array(identifier),
    cursor: queryCursorSchema.optional(),
  }),
]);

export const jobCatalogue = {
  cancel: { queue: queueNames.single, schema: cancelJobSchema, operation: 'cancel' },
  bulkCancel: { queue: queueNames.bulk, schema: bulkCancelJobSchema, operation: 'bulkCancel' },
  bulkCancelByQuery: { queue: queueNames.bulk, schema: bulkCancelByQueryJobSchema, operation: 'bulkCancelByQuery' },
  bulkCancelPart: { queue: queueNames.bulk, schema: bulkCancelPartJobSchema, operation: null },
} as const;

export type JobName = keyof typeof jobCatalogue;
export const jobNames = Object.keys(jobCatalogue) as JobName[];
export type JobPayload<N extends JobName> = z.infer<(typeof jobCatalogue)[N]['schema']>;
export type MerchantJobName = Exclude<JobName, 'bulkCancelPart'>;

/** Counts kept with every job (DESIGN §5). */
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

/** Job ids are UUIDs: unique across both queues, and free of ':' (BullMQ reserves it). */
export function newJobId(): string {
  return randomUUID();
}

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
    const parts = typeof value === 'string' ? [value] : [...new Set(value)].sort();
    // Length-prefixed, so no choice of characters inside an identifier can make two lists look alike.
    hash.update('\0').update(name);
    for (const part of parts) hash.update(`\0${part.length}:${part}`);
  }
  return `${operation}-${hash.digest('hex')}`;
}

const DAY_SECONDS = 24 * 60 * 60;

export const defaultJobOptions: DefaultJobOptions = {
  attempts: 8,
  // 1 s, 2 s, 4 s … with jitter, so that retries after a database outage do not arrive together.
  backoff: { type: 'exponential', delay: 1_000, jitter: 0.5 },
  // Completed jobs stay a day, but at most 200,000 of them per queue, so a day of millions of single
  // cancels cannot fill Redis; their status stays readable from cancellation_jobs after that.
  removeOnComplete: { age: DAY_SECONDS, count: 200_000 },
  removeOnFail: { age: 7 * DAY_SECONDS },
};
