/**
 * Which Postgres pool served the API's reads, as its /metrics tells (gateway_db_reads_total and the
 * replica gauges): how the read replica tests see where each read went.
 */

type ReadKind = 'readAll' | 'dryRun' | 'jobStatus' | 'jobRewards' | 'merchant';
export type ReadsByPool = Record<'primary' | 'replica', Record<ReadKind, number>>;

const KINDS: readonly ReadKind[] = ['readAll', 'dryRun', 'jobStatus', 'jobRewards', 'merchant'];

/** Prometheus text as `name{label=value,...}` → value, labels sorted by name, the `process` label left out. */
function parseMetrics(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels = [...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)]
      .filter(([, name]) => name !== 'process')
      .map(([, name, value]) => `${name}=${value}`)
      .sort();
    values.set(`${match[1]}{${labels.join(',')}}`, Number(match[3]));
  }
  return values;
}

export interface ReadMetrics {
  reads: ReadsByPool;
  /** gateway_db_replica_up; -1 when absent. */
  replicaUp: number;
  /** gateway_db_replica_lag_seconds (-1: not measured); NaN when absent. */
  replicaLagSeconds: number;
}

export function readMetrics(metricsText: string): ReadMetrics {
  const values = parseMetrics(metricsText);
  const byKind = (pool: string) =>
    Object.fromEntries(
      KINDS.map((kind) => [kind, values.get(`gateway_db_reads_total{kind=${kind},pool=${pool}}`) ?? 0]),
    ) as Record<ReadKind, number>;
  return {
    reads: { primary: byKind('primary'), replica: byKind('replica') },
    replicaUp: values.get('gateway_db_replica_up{}') ?? -1,
    replicaLagSeconds: values.get('gateway_db_replica_lag_seconds{}') ?? Number.NaN,
  };
}

/** Reads counted between two snapshots, by pool and kind. */
export function readsSince(after: ReadsByPool, before: ReadsByPool): ReadsByPool {
  const minus = (pool: 'primary' | 'replica') =>
    Object.fromEntries(KINDS.map((kind) => [kind, after[pool][kind] - before[pool][kind]])) as Record<ReadKind, number>;
  return { primary: minus('primary'), replica: minus('replica') };
}

/** gateway_http_requests_total for one route pattern and status, from the admin listener's /metrics (0 when absent). */
export async function httpRequestsCounted(adminUrl: string, route: string, status: number): Promise<number> {
  const values = parseMetrics(await (await fetch(`${adminUrl}/metrics`)).text());
  let total = 0;
  for (const [key, value] of values) {
    if (!key.startsWith('gateway_http_requests_total{')) continue;
    if (key.includes(`route=${route},`) && key.includes(`status=${status}}`)) total += value;
  }
  return total;
}
