/**
 * Every Redis key the service spells itself, and how long each lives: the one place the layout is
 * written down. BullMQ spells its own keys (`<prefix>:<queue>:wait`, `…:<jobId>:logs`, …) from the
 * same prefix; only the job hashes that our scripts read are spelled here too.
 *
 * Hash tag: every key starts with a queue prefix whose `{…}` part is the Redis Cluster hash tag. With
 * QUEUE_SHARDS=1 that is QUEUE_PREFIX itself (`{rewards}` by default) for every key. With more shards
 * (shards.ts) each shard has a prefix of its own (queueShardPrefix: `{rewards-<n>}`), holding that
 * shard's two cancellation queues and every per-merchant key of the merchants mapped to it; a job's keys
 * (its hash, its abort mark) are under its shard's prefix, which its id names. What is not per merchant
 * nor per job (the audit outbox, the webhooks queue, the readiness probe of that slot) stays under
 * QUEUE_PREFIX. So a script touches keys of one prefix only, always in one slot, and a key a script
 * builds from a value it read (SHARE_WAITING, single-cancel-batcher.ts) is in the slot of the keys it
 * declared.
 *
 * Each function takes the prefix it lives under (QUEUE_PREFIX, a merchant's or a job's shard prefix as
 * shards.ts gives it), so every process (API, worker, tests) builds the same keys.
 */

const SECOND_MS = 1_000;
const MINUTE_MS = 60 * SECOND_MS;
const DAY_SECONDS = 24 * 60 * 60;

/** The cancellation queues (the job catalogue says which jobs go to which). */
export const queueNames = {
  /** Single `cancel` requests, stored in batches (`cancelBatch`) and coalesced by the worker. */
  single: 'cancel',
  /** bulkCancel, bulkCancelByQuery, and the child jobs that split them across workers. */
  bulk: 'bulk-cancel',
} as const;
export type QueueName = (typeof queueNames)[keyof typeof queueNames];

/** How long the keys that expire live (the others are deleted by the code that owns them). */
export const keyLifetimes = {
  /**
   * A plain abort mark: as long as BullMQ keeps a failed job (7 days, job-catalogue.ts), in seconds, so
   * a job aborted while it ran reads `cancelled` for as long as Redis holds the job.
   */
  abortMarkSeconds: 7 * DAY_SECONDS,
  /**
   * A single cancel's dedup key: how long an identical request may still find a waiting member to
   * share (past it, it gets a job of its own); deleted sooner, when a worker takes the batch.
   */
  cancelDedupMs: 5 * MINUTE_MS,
  /**
   * A withdrawn mark (WITHDRAWN): the deduplication window. It is read only by the worker that takes
   * the member's batch and by job status while that batch waits; a batch taken later than this (a
   * backlog, an outage) has its members' audit rows checked instead (take-batch.ts), so nothing withdrawn
   * is applied.
   */
  withdrawnMarkMs: 5 * MINUTE_MS,
  /**
   * A merchant's turn and job sets, refreshed on every write: 7 days, far longer than a bulk item
   * waits in practice (a job older than that has failed and left BullMQ). A merchant idle that long has
   * nothing waiting, so the sets go; an entry lost with them only makes a later turn earlier.
   */
  merchantTurnsMs: 7 * DAY_SECONDS * SECOND_MS,
  /**
   * A merchant's pending webhook events, refreshed at every new event: 2 days, longer than the retry
   * schedule (about 17.5 h). Entries leave at their event's final outcome; this only bounds a leak.
   */
  webhookPendingMs: 2 * DAY_SECONDS * SECOND_MS,
  /**
   * What a webhook attempt's slot outlives the attempt's own bound (WEBHOOK_TIMEOUT_MS) by, before it
   * counts as abandoned (a worker that died mid-attempt): the slot is freed by its expiry, not leaked.
   */
  webhookSlotMarginMs: 5 * SECOND_MS,
  /** A finished idempotency record: how long a replay answers the first request's job id. */
  idempotencyRecordMs: 24 * 60 * MINUTE_MS,
  /**
   * A single cancel's idempotency record while its request stores the job (a bulk job's pending record
   * names its planned id and is kept idempotencyRecordMs instead): well above the producer's deadline
   * (ENQUEUE_TIMEOUT_MS, 1.5 s by default), so a slow store is not mistaken for an abandoned one, and
   * short, so a process that dies between the two steps blocks the key for seconds, not a day.
   */
  idempotencyPendingMs: 30 * SECOND_MS,
} as const;

/** The abort mark's value once the API has taken a waiting single cancel out of its batch. */
export const WITHDRAWN = 'withdrawn';
/** The abort key's value once a bulk job has run to its end unaborted (job-abort.ts `decideEnd`): not an abort. */
export const RAN_TO_END = 'ran-to-end';

/**
 * The prefix of queue shard `shard` (null: the unsharded layout, QUEUE_PREFIX itself). The shard number
 * goes inside the hash tag, so each shard is a slot of its own: `{rewards}` → `{rewards-3}`; a prefix
 * without a tag gets one (`bull` → `{bull-3}`). Lifetime: that of the keys under it.
 */
export function queueShardPrefix(prefix: string, shard: number | null): string {
  if (shard === null) return prefix;
  const open = prefix.indexOf('{');
  const close = open === -1 ? -1 : prefix.indexOf('}', open + 1);
  // Redis takes the first `{…}` with something inside as the tag; an empty `{}` is no tag at all.
  if (open === -1 || close <= open + 1) return `{${prefix}-${shard}}`;
  return `${prefix.slice(0, close)}-${shard}${prefix.slice(close)}`;
}

/**
 * `<prefix>:<queue>:` — BullMQ's job hash of a queue is this followed by the job id; its children's
 * bookkeeping follows the hash's key (`:processed`, `:dependencies`). Lifetime: BullMQ's retention
 * (job-catalogue.ts, webhook-catalogue.ts).
 */
export function jobKeyPrefix(prefix: string, queue: QueueName): string {
  return `${prefix}:${queue}:`;
}

export function jobKey(prefix: string, queue: QueueName, jobId: string): string {
  return `${jobKeyPrefix(prefix, queue)}${jobId}`;
}

/** What BullMQ keeps beside a parent job's hash: its finished children, and those still pending. */
export function jobChildrenKeys(jobHashKey: string): { processed: string; dependencies: string } {
  return { processed: `${jobHashKey}:processed`, dependencies: `${jobHashKey}:dependencies` };
}

/** `<prefix>:abort:` — a merchant's abort of a job is a string under this followed by the job id. */
export function abortKeyPrefix(prefix: string): string {
  return `${prefix}:abort:`;
}

/**
 * A merchant's abort of a job (job-abort.ts): the time it was asked, or WITHDRAWN, or RAN_TO_END (the
 * job's end decided without an abort). Lifetime:
 * keyLifetimes.abortMarkSeconds.
 */
export function abortKey(prefix: string, jobId: string): string {
  return `${abortKeyPrefix(prefix)}${jobId}`;
}

/**
 * The waiting single cancel that identical requests share (member-ids.ts builds the id). Lifetime:
 * keyLifetimes.cancelDedupMs.
 */
export function cancelDedupKey(prefix: string, deduplicationId: string): string {
  return `${prefix}:cancel-dedup:${deduplicationId}`;
}

/**
 * A merchant's bulk jobs queued or running, for its cap (a sorted set, merchant-turns.ts). A job leaves
 * when it finishes, and entries of jobs that are gone are pruned at the cap. Lifetime:
 * keyLifetimes.merchantTurnsMs, refreshed on every write.
 */
export function merchantJobsKey(prefix: string, merchantId: string): string {
  return `${prefix}:merchant:${merchantId}:jobs`;
}

/**
 * A merchant's bulk items waiting, scored by turn (a sorted set, merchant-turns.ts). An item leaves
 * when a worker starts it. Lifetime: keyLifetimes.merchantTurnsMs, refreshed on every write.
 */
export function merchantTurnsKey(prefix: string, merchantId: string): string {
  return `${prefix}:merchant:${merchantId}:turns`;
}

/**
 * Audit rows waiting for Postgres (a hash by job id, audit-outbox.ts). No expiry: a row is deleted
 * once Postgres has it, and it may be the only record of a job.
 */
export function auditOutboxKey(prefix: string): string {
  return `${prefix}:audit-outbox`;
}

/**
 * A merchant's request count in the current window (rate-limiter.ts). Lifetime: one counting window,
 * set by rate-limiter.ts (the window is the unit of the limit, not a retention choice).
 */
export function rateLimitKey(prefix: string, merchantId: string): string {
  return `${prefix}:rate:${merchantId.toLowerCase()}`;
}

/**
 * An idempotency record (idempotency.ts), by a short digest of the merchant and the key it chose (the
 * merchant id is inside the digest, not spelled out: a record must stay small, see docs/scaling.md).
 * Lifetime: idempotencyRecordMs, from the claim for a bulk job (its pending record names the job id chosen
 * before the store, and must outlive a store that timed out) and from the answer once stored; a single
 * cancel's pending record only keyLifetimes.idempotencyPendingMs.
 */
export function idempotencyRecordKey(prefix: string, merchantAndKeyDigest: string): string {
  return `${prefix}:i:${merchantAndKeyDigest}`;
}

/**
 * A version-1 signature seen in a URL (GET /betSlip), which no other route accepts from then on: the key
 * is a digest of the signature's timestamp and hash (url-signature-binding.ts), the value `1`.
 * Under the merchant's own keys, so a layout that moves per-merchant keys moves this one with them.
 * Lifetime: until the signature leaves its window (SIGNATURE_WINDOW_MS after its timestamp), PXAT.
 */
export function urlSignatureKey(prefix: string, merchantId: string, signatureDigest: string): string {
  return `${prefix}:merchant:${merchantId.toLowerCase()}:url-sig:${signatureDigest}`;
}

/**
 * A version-2 request's replay record (idempotency.ts, the same record as an Idempotency-Key's), by a
 * digest of its X-Signature value (never the value itself). Under the merchant's own keys. Lifetime:
 * until the X-Signature leaves its window (SIGNATURE_WINDOW_MS after its `t`), PXAT.
 */
export function signatureReplayKey(prefix: string, merchantId: string, signatureDigest: string): string {
  return `${prefix}:merchant:${merchantId.toLowerCase()}:sig:${signatureDigest}`;
}

/**
 * How many records of one kind a merchant has made per bucket of time (a hash of bucket → count,
 * api/record-count.ts): kind `i` its Idempotency-Key records, `sig` its version-2 replay records. Under
 * the merchant's own keys, in the slot of the records it counts. Lifetime: the records' own and one
 * bucket (a 24th of it), refreshed at each record made.
 */
export function merchantRecordCountKey(prefix: string, merchantId: string, kind: 'i' | 'sig'): string {
  return `${prefix}:merchant:${merchantId.toLowerCase()}:records:${kind}`;
}

/**
 * A merchant's webhook events not yet finished (a sorted set of event ids scored by when each was
 * queued, webhook-pending.ts): the pending cap counts it and gives up its oldest. An event leaves at
 * its final outcome. Lifetime: keyLifetimes.webhookPendingMs, refreshed at every new event.
 */
export function webhookPendingKey(prefix: string, merchantId: string): string {
  return `${prefix}:webhook:${merchantId.toLowerCase()}:pending`;
}

/**
 * Every merchant with pending webhook events, scored by how many it has (a sorted set kept by the same
 * scripts that change the pending sets, webhook-pending.ts): `gateway_webhook_pending` reads its top
 * merchants in one command, with no key scan. A merchant leaves it when its last event does.
 * Lifetime: keyLifetimes.webhookPendingMs, refreshed at every new event (as the sets it counts).
 */
export function webhookPendingIndexKey(prefix: string): string {
  return `${prefix}:webhook:pending-by-merchant`;
}

/**
 * A merchant's webhook attempts in flight (a sorted set of event ids scored by the slot's expiry,
 * webhook-slots.ts): at most WEBHOOK_MERCHANT_CONCURRENCY. An entry leaves when its attempt ends, or
 * is ignored and pruned once expired (a worker that died mid-attempt). Lifetime: the latest slot's.
 */
export function webhookInflightKey(prefix: string, merchantId: string): string {
  return `${prefix}:webhook:${merchantId.toLowerCase()}:inflight`;
}

/**
 * How many events a merchant had sent on request (webhooks/redeliver, webhooks/test) in one minute,
 * `window` being the minute's number since the epoch (merchant-webhook-bounds.ts). Lifetime: the
 * minute's end, PEXPIREAT.
 */
export function webhookManualSendsKey(prefix: string, merchantId: string, window: number): string {
  return `${prefix}:webhook:${merchantId.toLowerCase()}:manual:${window}`;
}

/**
 * Never written: readiness asks for it (EXISTS) under QUEUE_PREFIX and under every queue shard's prefix,
 * only to reach each node that owns one of those slots.
 */
export function readinessProbeKey(prefix: string): string {
  return `${prefix}:readiness`;
}
