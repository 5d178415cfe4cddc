import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureStatements, splitStatements } from '../../src/tools/migration-lint/capture-statements.js';
import {
  type CapturedMigration,
  checkMigration,
  emptyCatalogue,
  type Finding,
} from '../../src/tools/migration-lint/migration-rules.js';
import { squawkFindings } from '../../src/tools/migration-lint/squawk.js';
import * as fixture from '../fixtures/migrations/rewards-index-and-check.js';

/**
 * The migration linter (`npm run lint:migrations`, docs/design.md §17): squawk's findings and this
 * project's rules, with the exemptions that let a baseline pass (tables created in the same file)
 * and the partitioned-table index pattern.
 */

const SQUAWK = join(process.cwd(), 'node_modules/.bin/squawk');

/** An earlier migration that created `rewards` partitioned by hash and `jobs` plain. */
const baseline: CapturedMigration = {
  name: '2026-11-25T0000-baseline',
  transaction: true,
  linted: true,
  statements: [
    'CREATE TABLE rewards (id uuid, merchant_id uuid NOT NULL, status text) PARTITION BY HASH (merchant_id)',
    'CREATE TABLE rewards_p0 PARTITION OF rewards FOR VALUES WITH (MODULUS 2, REMAINDER 0)',
    'CREATE TABLE rewards_p1 PARTITION OF rewards FOR VALUES WITH (MODULUS 2, REMAINDER 1)',
    'CREATE INDEX rewards_status_idx ON rewards (merchant_id, status)',
    "ALTER TABLE rewards ADD CONSTRAINT rewards_status_check CHECK (status IN ('A', 'B'))",
    'CREATE TABLE jobs (id uuid PRIMARY KEY, state text)',
    'CREATE INDEX jobs_state_idx ON jobs (state)',
    'ALTER TABLE jobs ALTER COLUMN state SET NOT NULL',
  ],
};

function lint(migration: Omit<CapturedMigration, 'name' | 'linted'>): Finding[] {
  const later = { ...migration, name: '2026-11-26T0100-change', linted: true };
  const all = [baseline, later];
  const fromSquawk = squawkFindings(SQUAWK, all);
  const catalogue = emptyCatalogue();
  const findings = all.flatMap((m) => checkMigration(m, catalogue, fromSquawk.get(m.name) ?? []));
  return findings;
}

const rules = (findings: Finding[]) => findings.map((finding) => `${finding.statement}:${finding.rule}`);

describe('migration linter', () => {
  it('passes a baseline: statements on tables created in the same file are exempt', () => {
    expect(lint({ transaction: true, statements: ['SELECT 1'] })).toEqual([]);
  });

  it('flags CREATE INDEX without CONCURRENTLY on an existing table, and CONCURRENTLY in a transaction', () => {
    expect(rules(lint({ transaction: true, statements: ['CREATE INDEX jobs_id_idx ON jobs (id)'] }))).toEqual([
      '0:require-concurrent-index-creation',
    ]);
    expect(
      rules(lint({ transaction: true, statements: ['CREATE INDEX CONCURRENTLY jobs_id_idx ON jobs (id)'] })),
    ).toEqual(['0:concurrently-in-transaction']);
    expect(lint({ transaction: false, statements: ['CREATE INDEX CONCURRENTLY jobs_id_idx ON jobs (id)'] })).toEqual(
      [],
    );
  });

  it('flags CONCURRENTLY on a partitioned parent and passes the ON ONLY / per partition / ATTACH pattern', () => {
    const direct = lint({
      transaction: false,
      statements: ['CREATE INDEX CONCURRENTLY rewards_m_idx ON rewards (merchant_id)'],
    });
    expect(rules(direct)).toEqual(['0:concurrently-on-partitioned-table']);
    expect(direct[0]?.message).toMatch(/ON ONLY rewards.*ATTACH PARTITION/);
    expect(
      lint({
        transaction: false,
        statements: [
          'CREATE INDEX IF NOT EXISTS rewards_m_idx ON ONLY rewards (merchant_id)',
          'CREATE INDEX CONCURRENTLY IF NOT EXISTS rewards_p0_m_idx ON rewards_p0 (merchant_id)',
          'ALTER INDEX rewards_m_idx ATTACH PARTITION rewards_p0_m_idx',
          'CREATE INDEX CONCURRENTLY IF NOT EXISTS rewards_p1_m_idx ON rewards_p1 (merchant_id)',
          'ALTER INDEX rewards_m_idx ATTACH PARTITION rewards_p1_m_idx',
        ],
      }),
    ).toEqual([]);
  });

  it('wants new constraints NOT VALID, validated outside the transaction that added them', () => {
    expect(
      rules(lint({ transaction: true, statements: ["ALTER TABLE jobs ADD CONSTRAINT jobs_c CHECK (state <> '')"] })),
    ).toEqual(['0:constraint-missing-not-valid']);
    expect(
      rules(
        lint({
          transaction: true,
          statements: [
            "ALTER TABLE jobs ADD CONSTRAINT jobs_c CHECK (state <> '') NOT VALID",
            'ALTER TABLE jobs VALIDATE CONSTRAINT jobs_c',
          ],
        }),
      ),
    ).toEqual(['1:validate-in-same-transaction']);
    expect(
      lint({
        transaction: false,
        statements: [
          "ALTER TABLE jobs ADD CONSTRAINT jobs_c CHECK (state <> '') NOT VALID",
          'ALTER TABLE jobs VALIDATE CONSTRAINT jobs_c',
        ],
      }),
    ).toEqual([]);
  });

  it('flags a column type change and SET NOT NULL on an existing table, unless silenced with a reason', () => {
    expect(
      rules(lint({ transaction: true, statements: ['ALTER TABLE jobs ALTER COLUMN state TYPE varchar(20)'] })),
    ).toEqual(['0:changing-column-type']);
    expect(rules(lint({ transaction: true, statements: ['ALTER TABLE jobs ALTER COLUMN id SET NOT NULL'] }))).toEqual([
      '0:adding-not-nullable-field',
    ]);
    // The safe pattern: CHECK (… IS NOT NULL) NOT VALID and VALIDATE before, so SET NOT NULL does not scan.
    expect(
      lint({
        transaction: true,
        statements: [
          '-- squawk-ignore adding-not-nullable-field (jobs_id_not_null validated by 2026-11-26T0000)\nALTER TABLE jobs ALTER COLUMN id SET NOT NULL',
        ],
      }),
    ).toEqual([]);
  });

  it('wants a backfill in LIMITed batches, outside a transaction', () => {
    expect(rules(lint({ transaction: true, statements: ["UPDATE jobs SET state = 'x' WHERE state IS NULL"] }))).toEqual(
      ['0:backfill-in-batches'],
    );
    expect(
      rules(lint({ transaction: false, statements: ["UPDATE jobs SET state = 'x' WHERE state IS NULL"] })),
    ).toEqual(['0:backfill-in-batches']);
    expect(
      lint({
        transaction: false,
        statements: ["UPDATE jobs SET state = 'x' WHERE id IN (SELECT id FROM jobs WHERE state IS NULL LIMIT 5000)"],
      }),
    ).toEqual([]);
  });

  it('captures the SQL a migration sends without a database, one statement each', async () => {
    expect(splitStatements("CREATE TABLE a (b text DEFAULT ';');\n-- c;\nCREATE INDEX d ON a (b); ")).toEqual([
      "CREATE TABLE a (b text DEFAULT ';')",
      '-- c;\nCREATE INDEX d ON a (b)',
    ]);
    const statements = await captureStatements(fixture);
    expect(statements.some((statement) => /ADD CONSTRAINT[\s\S]*NOT VALID/.test(statement))).toBe(true);
    expect(statements.some((statement) => /CREATE INDEX CONCURRENTLY/.test(statement))).toBe(true);
    const captured: CapturedMigration = {
      name: '2099-01-01T0000-fixture',
      transaction: fixture.transaction !== false,
      linted: true,
      statements,
    };
    // With no database the fixture finds rewards unpartitioned and takes that path: right on a plain
    // rewards, and flagged where the linter knows rewards is partitioned (a migration written for the
    // partitioned schema writes the ON ONLY / ATTACH pattern itself).
    expect(checkMigration(captured, emptyCatalogue(), squawkFindings(SQUAWK, [captured]).get(captured.name))).toEqual(
      [],
    );
    expect(rules(lint({ transaction: captured.transaction, statements }))).toEqual([
      `${statements.findIndex((statement) => /CREATE INDEX CONCURRENTLY/.test(statement))}:concurrently-on-partitioned-table`,
    ]);
  });
});
