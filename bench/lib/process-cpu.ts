import { readFile } from 'node:fs/promises';

/** Linux's USER_HZ: /proc reports CPU time in ticks of 1/100 s on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; null off Linux or once
 * it has exited. CPU per request is what the tracing phase compares besides throughput: on a machine
 * shared with other work, throughput moves with the neighbours' load, CPU per request much less.
 */
export async function processCpuSeconds(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), closed by its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / TICKS_PER_SECOND : null;
  } catch {
    return null;
  }
}
