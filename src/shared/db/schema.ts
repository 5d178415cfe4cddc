import type { ColumnType, Generated, Selectable } from 'kysely';

/**
 * Kysely's view of the tables created by the migrations in ./migrations. Numeric columns come back
 * from `pg` as strings on purpose: amounts are never rounded through a JavaScript number.
 */

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Numeric = ColumnType<string, string | number, string | number>;

/** The merchant operations that make a cancellation job (the `operation` column). */
export const operations = ['cancel', 'bulkCancel', 'bulkCancelByQuery'] as const;
export type Operation = (typeof operations)[number];

export const merchantStatuses = ['ACTIVE', 'DISABLED'] as const;
export type MerchantStatus = (typeof merchantStatuses)[number];

/** 1: the interface's signature alone; 2: also the body-bound `X-Signature` header. */
export type SignatureVersion = 1 | 2;

export const rewardStatuses = ['ACTIVE', 'USED', 'EXPIRED', 'CANCELLED'] as const;
export type RewardStatus = (typeof rewardStatuses)[number];

export const configurationStatuses = ['ACTIVE', 'INACTIVE'] as const;
export type ConfigurationStatus = (typeof configurationStatuses)[number];

export const rewardTypes = ['FREE_BET'] as const;
export type RewardType = (typeof rewardTypes)[number];

export type JobState = 'queued' | 'running' | 'completed' | 'failed' | 'cancelling' | 'cancelled';

interface MerchantsTable {
  id: Generated<string>;
  name: string;
  secret_key: string;
  previous_secret_key: string | null;
  previous_secret_valid_until: Timestamp | null;
  status: Generated<MerchantStatus>;
  /** IPv4/IPv6 addresses or CIDR ranges; null: any source. */
  allowed_ips: string[] | null;
  /** Requests per second on merchant routes, across all API replicas; null: RATE_LIMIT_PER_SECOND. */
  rate_limit_per_second: number | null;
  /** Bulk jobs of this merchant queued or running at once; null: MAX_QUEUED_JOBS. */
  max_queued_jobs: number | null;
  signature_version: Generated<SignatureVersion>;
  /** true: version 1 is refused on the cancel and abort routes (X-Signature required there). */
  require_signature_v2: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Generated<Date>;
}

interface RewardConfigurationsTable {
  id: Generated<string>;
  merchant_id: string;
  external_id: string | null;
  name: string;
  status: ConfigurationStatus;
  reward_type: RewardType;
  number_of_free_bets: number;
  start_date: Timestamp;
  end_date: Timestamp;
  duration_minutes: number;
  created_at: CreatedAt;
}

interface GameRewardConfigurationsTable {
  id: Generated<string>;
  reward_configuration_id: string;
  game_id: number;
}

interface BetConstraintsTable {
  game_reward_configuration_id: string;
  currency: string;
  bet_amount: Numeric;
  max_win_per_bet: Numeric;
}

interface RewardsTable {
  id: Generated<string>;
  merchant_id: string;
  external_id: string | null;
  player_id: string;
  reward_configuration_id: string;
  status: Generated<RewardStatus>;
  cancelled_at: Timestamp | null;
  /** The id the merchant received in X-Job-Id for the request that cancelled it. */
  cancellation_job_id: string | null;
  created_at: CreatedAt;
}

export interface PlayersTable {
  merchant_id: string;
  player_id: string;
  username: string | null;
  nickname: string | null;
  first_name: string | null;
  last_name: string | null;
  gender: string | null;
  email: string | null;
  phone: string | null;
  address: string | null;
  city: string | null;
  country: string | null;
  language: string | null;
  test: Generated<boolean>;
}

interface WalletsTable {
  merchant_id: string;
  player_id: string;
  currency: string;
  balance: Numeric;
  updated_at: Generated<Date>;
}

interface SessionsTable {
  id: Generated<string>;
  merchant_id: string;
  /** SHA-256 of the session token: the token itself is never stored. */
  token_digest: Buffer;
  player_id: string;
  currency: string;
  expires_at: Timestamp | null;
  ip_address: string | null;
  device_platform: string | null;
  /**
   * The bet slip items as /betSlip answers them (a JSON array), written once with the session: its
   * items never change. json keeps the text as written; read it as text (pg would parse a json column).
   */
  bet_slip_json: ColumnType<unknown, string, never>;
  created_at: CreatedAt;
}

export interface BetSlipItemsTable {
  session_id: string;
  position: number;
  sport_id: string;
  sport_name: string;
  bet_slip_id: string | null;
  match_name: string;
  match_id: string;
  competition_id: string;
  competition_name: string;
  market_id: string;
  market_name: string;
  market_option_id: string;
  market_option_name: string;
  odd: number;
  margin: number | null;
  home_team: string;
  away_team: string;
}

/** What a single cancel's one reward was: its counts, in one column (migration 2026-11-24T0100). */
export type CancelOutcome = 'cancelled' | 'alreadyCancelled' | 'notCancellable' | 'notFound';

/** One row per job of a merchant's (a single cancel, a bulk job); read by id only. */
interface CancellationJobsTable {
  id: string;
  merchant_id: string;
  /** The `job_operation` enum. */
  operation: ColumnType<Operation, string, string>;
  state: JobState;
  request_id: string | null;
  /** Counts of a bulk job; NULL for a single cancel, whose counts are its `outcome`. */
  requested: number | null;
  cancelled: number | null;
  already_cancelled: number | null;
  not_cancellable: number | null;
  not_found: number | null;
  players: number | null;
  /** A completed single cancel's outcome; NULL for bulk jobs and unfinished or failed single cancels. */
  outcome: CancelOutcome | null;
  /** The reward a single cancel cancelled (its job's rewards page); NULL otherwise. */
  reward_id: string | null;
  error: string | null;
  attempts: Generated<number>;
  created_at: Timestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
}

interface MerchantWebhooksTable {
  merchant_id: string;
  url: string;
  /** Event types sent: job.completed, job.failed, job.cancelled. */
  events: string[];
  /** `whsec_` + base64: the signing secret, shown to the admin only when set. */
  secret: string;
  created_at: CreatedAt;
  updated_at: Generated<Date>;
  /** The first failed attempt since the last delivery; null while the endpoint delivers. */
  failing_since: Timestamp | null;
  /** Set when every attempt has failed for WEBHOOK_DISABLE_AFTER_MS; cleared by a PUT. */
  disabled_at: Timestamp | null;
  disabled_reason: string | null;
  /** After a rotation: the replaced secret (sealed), which signs deliveries too until it expires. */
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
}

/** dropped: given up unsent (the merchant's pending cap, or its endpoint disabled); the reason in last_error. */
export const webhookDeliveryStates = ['pending', 'delivered', 'failed', 'dropped'] as const;
export type WebhookDeliveryState = (typeof webhookDeliveryStates)[number];

interface WebhookDeliveriesTable {
  /** The event id; `msg_<id>` is the webhook-id header of every attempt. */
  id: string;
  merchant_id: string;
  type: string;
  job_id: string;
  /** The exact body sent (json keeps its text as written); read back as text. */
  payload: ColumnType<unknown, string, never>;
  state: Generated<WebhookDeliveryState>;
  attempts: Generated<number>;
  /** HTTP status of the last attempt; null when it got no answer. */
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: Timestamp | null;
  delivered_at: Timestamp | null;
  created_at: CreatedAt;
}

/** One attempt sent for a delivery: when, the HTTP status (null: no answer), how long, why it failed. */
interface WebhookDeliveryAttemptsTable {
  event_id: string;
  attempted_at: Generated<Date>;
  status: number | null;
  duration_ms: number;
  error: string | null;
}

/**
 * Which rewards a job cancelled, by first byte of the id (`bucket`), or -1 for a short statement's whole
 * list: written by the cancel statement itself.
 */
interface JobRewardsTable {
  job_id: string;
  bucket: number;
  first_id: string;
  /** Sorted. */
  reward_ids: string[];
}

interface JobCancelSlicesTable {
  id: Generated<string>;
  job_id: string;
  merchant_id: string;
  /** The cancelling statement's now(): the `cancelled_at` of every reward it changed. */
  cancelled_at: Date;
  player_ids: string[];
}

/** An identifier of a by-id job that the job did not cancel, and why (one row each). */
interface JobUnappliedIdentifiersTable {
  merchant_id: string;
  job_id: string;
  kind: 'id' | 'externalId';
  identifier: string;
  outcome: 'notFound' | 'notCancellable' | 'alreadyCancelled';
}

/** One admin write: who (the operator's name), what, on what, when; settings before and after. */
interface AdminAuditLogTable {
  id: Generated<string>;
  created_at: CreatedAt;
  operator: string;
  /** `merchant.update`, `webhook.put`, `dashboard.write`, ... */
  action: string;
  /** What the write applied to: a merchant id, a queue path. */
  target: string | null;
  before: ColumnType<unknown, string | null, never>;
  after: ColumnType<unknown, string | null, never>;
  request_id: string | null;
}

/** A portal link (docs/portal.md): only its token's SHA-256 is kept. */
interface PortalLinksTable {
  id: string;
  merchant_id: string;
  token_hash: Buffer;
  /** The operator who issued it. */
  created_by: string;
  created_at: CreatedAt;
  expires_at: Date;
  used_at: Date | null;
}

/** A portal session a link opened: its cookie token's SHA-256 and the one merchant it may see. */
interface PortalSessionsTable {
  id: string;
  merchant_id: string;
  link_id: string;
  token_hash: Buffer;
  created_at: CreatedAt;
  expires_at: Date;
  revoked_at: Date | null;
  revoked_by: string | null;
}

export interface Database {
  merchants: MerchantsTable;
  reward_configurations: RewardConfigurationsTable;
  game_reward_configurations: GameRewardConfigurationsTable;
  bet_constraints: BetConstraintsTable;
  rewards: RewardsTable;
  players: PlayersTable;
  wallets: WalletsTable;
  sessions: SessionsTable;
  bet_slip_items: BetSlipItemsTable;
  cancellation_jobs: CancellationJobsTable;
  merchant_webhooks: MerchantWebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  job_rewards: JobRewardsTable;
  job_cancel_slices: JobCancelSlicesTable;
  job_unapplied_identifiers: JobUnappliedIdentifiersTable;
  admin_audit_log: AdminAuditLogTable;
  portal_links: PortalLinksTable;
  portal_sessions: PortalSessionsTable;
}

export type Merchant = Selectable<MerchantsTable>;
export type Reward = Selectable<RewardsTable>;
export type CancellationJobRow = Selectable<CancellationJobsTable>;
