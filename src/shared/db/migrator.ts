import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import * as initial from './migrations/2026-11-20T0000-initial.js';
import * as rewardsCancelLayout from './migrations/2026-11-21T0000-rewards-cancel-layout.js';
import * as merchantQuotas from './migrations/2026-11-22T0000-merchant-quotas.js';
import * as jobStates from './migrations/2026-11-22T0100-job-states.js';
import * as signatureVersion from './migrations/2026-11-22T0200-signature-version.js';
import * as webhooks from './migrations/2026-11-22T0300-webhooks.js';
import * as jobRewards from './migrations/2026-11-22T0400-job-rewards.js';
import * as sessionBetSlipJson from './migrations/2026-11-22T0500-session-bet-slip-json.js';
import * as rewardsCancelRoom from './migrations/2026-11-22T0600-rewards-cancel-room.js';
import * as jobCancelSlices from './migrations/2026-11-22T0700-job-cancel-slices.js';
import * as slimJobBookkeeping from './migrations/2026-11-24T0100-slim-job-bookkeeping.js';
import * as retention from './migrations/2026-11-24T0200-retention.js';
import * as webhookBounds from './migrations/2026-11-24T0300-webhook-bounds.js';

/**
 * Migrations are listed here rather than read from a folder, so that the built code and the
 * TypeScript sources run the same set whatever the working directory.
 */
const migrations: Record<string, Migration> = {
  '2026-11-20T0000-initial': initial,
  '2026-11-21T0000-rewards-cancel-layout': rewardsCancelLayout,
  '2026-11-22T0000-merchant-quotas': merchantQuotas,
  '2026-11-22T0100-job-states': jobStates,
  '2026-11-22T0200-signature-version': signatureVersion,
  '2026-11-22T0300-webhooks': webhooks,
  '2026-11-22T0400-job-rewards': jobRewards,
  '2026-11-22T0500-session-bet-slip-json': sessionBetSlipJson,
  '2026-11-22T0600-rewards-cancel-room': rewardsCancelRoom,
  '2026-11-22T0700-job-cancel-slices': jobCancelSlices,
  '2026-11-24T0100-slim-job-bookkeeping': slimJobBookkeeping,
  '2026-11-24T0200-retention': retention,
  '2026-11-24T0300-webhook-bounds': webhookBounds,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * Applies every pending migration. Kysely's Postgres adapter takes an advisory lock for the run, so
 * several processes (replicas starting together) may call this at once: one applies, the rest wait
 * and then find nothing to do.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
