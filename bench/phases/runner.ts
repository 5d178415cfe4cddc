import pg from 'pg';
import type { PhaseGroup } from '../lib/settings.js';
import type { BenchContext } from './context.js';

/**
 * One measurement: it starts from a fresh copy of the seeded database, an empty queue prefix and no
 * running service, and every service it starts is stopped at its end, so that one phase's failure is
 * recorded and the next still runs.
 */
export interface Phase {
  kind: 'phase';
  /** The `--only` group it belongs to. */
  group: PhaseGroup;
  name: string;
  run(db: pg.Pool): Promise<void>;
}

/**
 * Work between phases that needs no fresh copy (opening or closing a helper process, summing up runs).
 * It runs whenever its group is selected, also once the run is being torn down, as a close must.
 */
export interface Step {
  kind: 'step';
  group: PhaseGroup;
  run(): Promise<void>;
}

export type TableEntry = Phase | Step;

export function phase(group: PhaseGroup, name: string, run: (db: pg.Pool) => Promise<void>): Phase {
  return { kind: 'phase', group, name, run };
}

export function step(group: PhaseGroup, run: () => Promise<void>): Step {
  return { kind: 'step', group, run };
}

export type PhaseErrors = Array<{ phase: string; message: string }>;

/** Runs the table in order: the groups `--only` did not select are skipped, and so is every phase once interrupted. */
export async function runTable(context: BenchContext, table: readonly TableEntry[]): Promise<PhaseErrors> {
  const { settings } = context;
  const errors: PhaseErrors = [];
  for (const entry of table) {
    if (settings.only !== null && !settings.only.has(entry.group)) continue;
    if (entry.kind === 'step') await entry.run();
    else if (!context.interrupted()) await runPhase(context, entry, errors);
  }
  return errors;
}

async function runPhase(context: BenchContext, { name, run }: Phase, errors: PhaseErrors): Promise<void> {
  const { progress, services, environment, checks } = context;
  progress.step(`── ${name}: fresh copy of the seeded database, empty queue prefix`);
  let db: pg.Pool | null = null;
  try {
    await services.stopAll();
    await context.databases.cloneFreshLive();
    await context.queue.deleteAll();
    db = new pg.Pool({ connectionString: environment.databaseUrl, max: 4, application_name: 'rewards-bench' });
    db.on('error', () => {});
    await run(db);
  } catch (error) {
    const message = (error as Error).message;
    errors.push({ phase: name, message });
    checks.expect(`${name} ran to its end`, false, message);
    progress.step(`${name} FAILED: ${message}`);
  } finally {
    await services.stopAll();
    await db?.end();
  }
}
