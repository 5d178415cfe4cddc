import { cpus, loadavg, totalmem } from 'node:os';
import { round } from './percentiles.js';

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  postgres: string;
  redis: string;
  /** 1, 5 and 15 minutes, when the run began: other work on the machine skews the figures. */
  loadAverageAtStart: number[];
}

/** The machine's 1-minute load average now: recorded beside figures that other work may have skewed. */
export function loadAverage1m(): number {
  return round(loadavg()[0] ?? 0, 2);
}

export function describeMachine(postgres: string, redis: string): MachineInfo {
  const processors = cpus();
  return {
    cpus: processors.length,
    cpuModel: processors[0]?.model.trim() ?? 'unknown',
    memoryGiB: round(totalmem() / 1024 ** 3, 1),
    node: process.version,
    postgres,
    redis,
    loadAverageAtStart: loadavg().map((value) => round(value, 2)),
  };
}
