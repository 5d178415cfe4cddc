import { type Kysely, sql } from 'kysely';
import { type MigrationModule, type MigrationRunOptions, runMigrations } from './migration-runner.js';
import { baseline } from './migrations/2026-11-25T0000-baseline.js';
import * as adminAuditLog from './migrations/2026-11-26T0200-admin-audit-log.js';
import * as requireSignatureV2 from './migrations/2026-11-26T0250-require-signature-v2.js';
import * as jobUnappliedIdentifiers from './migrations/2026-11-27T0000-job-unapplied-identifiers.js';
import * as webhookSelfService from './migrations/2026-11-28T0100-webhook-self-service.js';
import * as merchantPortal from './migrations/2026-11-29T0000-merchant-portal.js';

/** Hash partitions of `rewards` made by the baseline when REWARD_PARTITIONS is not set. */
const DEFAULT_REWARD_PARTITIONS = 16;

export interface MigrationOptions {
  /**
   * Hash partitions of `rewards`: used by the first migration only (the baseline). A database migrated
   * before keeps the count it was created with (`rewardPartitionCount`).
   */
  rewardPartitions?: number;
}

/**
 * Migrations are listed here rather than read from a folder, so that the built code and the
 * TypeScript sources run the same set whatever the working directory.
 */
export function migrations({
  rewardPartitions = DEFAULT_REWARD_PARTITIONS,
}: MigrationOptions): Record<string, MigrationModule> {
  return {
    '2026-11-25T0000-baseline': baseline({ rewardPartitions }),
    '2026-11-26T0200-admin-audit-log': adminAuditLog,
    '2026-11-26T0250-require-signature-v2': requireSignatureV2,
    '2026-11-27T0000-job-unapplied-identifiers': jobUnappliedIdentifiers,
    '2026-11-28T0100-webhook-self-service': webhookSelfService,
    '2026-11-29T0000-merchant-portal': merchantPortal,
  };
}

/**
 * Applies every pending migration, each in its own transaction (or none, for a file that says
 * `export const transaction = false`) under `lock_timeout`, retried when a lock is not granted in time
 * (src/shared/db/migration-runner.ts). A session advisory lock makes it safe for several processes to
 * call this at once: one applies, the rest wait and then find nothing to do.
 */
export async function migrateToLatest(
  db: Kysely<any>,
  options: MigrationOptions & MigrationRunOptions = {},
): Promise<string[]> {
  return runMigrations(db, migrations(options), options);
}

/** How many hash partitions `rewards` has: fixed when the database was first migrated. */
export async function rewardPartitionCount(db: Kysely<any>): Promise<number> {
  const result = await sql<{ partitions: number }>`
    SELECT count(*)::int AS partitions FROM pg_inherits WHERE inhparent = 'rewards'::regclass
  `.execute(db);
  return result.rows[0]?.partitions ?? 0;
}
