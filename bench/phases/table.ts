import { rawUpdatePhases, replicaPhases, sampledOneWorkerPhase } from './bulk-cancel.phase.js';
import type { BenchContext, BenchData } from './context.js';
import { fairTurnsPhase } from './fair-turns.phase.js';
import { httpPhase } from './http.phase.js';
import { emptyMeasurements, type PhaseResults, phaseResults } from './measurements.js';
import { phaseKit } from './phase-kit.js';
import { readAllStreamPhases } from './read-all-stream.phase.js';
import { redisMemoryPhase } from './redis-memory.phase.js';
import { runTable, type TableEntry } from './runner.js';
import { singleCancelPhases } from './single-cancels.phase.js';
import { tracingPhase } from './tracing.phase.js';
import { workerMemoryPhase } from './worker-memory.phase.js';

/**
 * The measurements, in the order they run (each group's entries in its own `*.phase.ts`). `--only`
 * selects groups; each phase starts from a fresh copy of the seeded database (see runner.ts).
 */
export async function runAllPhases(context: BenchContext, data: BenchData): Promise<PhaseResults> {
  const measured = emptyMeasurements(context.settings);
  const kit = phaseKit(context, data, measured);
  const table: TableEntry[] = [
    httpPhase(kit),
    tracingPhase(kit),
    ...singleCancelPhases(kit),
    sampledOneWorkerPhase(kit),
    ...readAllStreamPhases(kit),
    ...rawUpdatePhases(kit),
    ...replicaPhases(kit),
    workerMemoryPhase(kit),
    redisMemoryPhase(kit),
    fairTurnsPhase(kit),
  ];
  const errors = await runTable(context, table);
  return phaseResults(context.settings, measured, errors);
}
