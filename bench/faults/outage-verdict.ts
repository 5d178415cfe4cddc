import type { Check } from '../lib/checks.js';
import type { JobStatus } from '../lib/merchant-client.js';

/** One single cancel sent around the outage. */
export interface SentSingle {
  rewardId: string;
  status: number;
  jobId: string | null;
  at: number;
}

/** What the outage run saw, from the first request to the last job finished. */
export interface OutageObservations {
  singles: readonly SentSingle[];
  /** The singles answered 200 with a job id. */
  accepted: readonly SentSingle[];
  outage: { start: number; end: number };
  /** When the first reward was cancelled after Postgres came back. */
  resumedAt: number;
  /** readAll probes sent every second during the outage. */
  probes: ReadonlyArray<{ status: number; ms: number }>;
  aliveAtOutageEnd: { api: boolean; worker: boolean };
  aliveAtEnd: boolean;
  failedJobs: number;
  failedDuringOutage: number;
  notApplied: number;
  stillActive: number;
  bulk: { status: JobStatus; carried: number; targeted: number };
  wrongSingles: number;
}

/** The promises the run checks, and the figures it prints beside them. */
export function outageVerdict(o: OutageObservations): { checks: Check[]; figures: Record<string, unknown> } {
  const duringOutage = o.singles.filter((s) => s.at >= o.outage.start && s.at <= o.outage.end);
  const resumeMs = o.resumedAt - o.outage.end;
  const slowProbes = o.probes.filter((p) => p.status !== 503 || p.ms > 2_000);
  const { status: bulkStatus, carried, targeted } = o.bulk;
  const checks: Check[] = [
    {
      name: 'api and worker alive',
      ok: o.aliveAtOutageEnd.api && o.aliveAtOutageEnd.worker && o.aliveAtEnd,
      detail: JSON.stringify(o.aliveAtOutageEnd),
    },
    {
      name: 'no job failed',
      ok: o.failedJobs === 0 && o.failedDuringOutage === 0,
      detail: `${o.failedJobs} failed (${o.failedDuringOutage} during the outage)`,
    },
    {
      name: 'cancels accepted during the outage',
      ok: duringOutage.every((s) => s.status === 200) && duringOutage.length > 0,
      detail: `${duringOutage.filter((s) => s.status === 200).length} of ${duringOutage.length} answered 200`,
    },
    {
      name: 'every promised reward CANCELLED',
      ok: o.notApplied === 0 && o.stillActive === 0,
      detail: `${o.notApplied} single-cancel rewards not applied, ${o.stillActive} queried rewards still ACTIVE`,
    },
    {
      name: 'counts exact',
      ok: bulkStatus.result?.cancelled === carried && carried === targeted && o.wrongSingles === 0,
      detail: `bulk result ${JSON.stringify(bulkStatus.result)}, ${carried} rewards carry its id, ${targeted} targeted; ${o.wrongSingles} single results wrong`,
    },
    { name: 'resumed within 5 s of Postgres answering', ok: resumeMs <= 5_000, detail: `${resumeMs} ms` },
    {
      name: 'reads answered 503 within 2 s during the outage',
      ok: slowProbes.length === 0 && o.probes.length > 0,
      detail: `${o.probes.length - slowProbes.length} of ${o.probes.length}`,
    },
  ];
  const statuses: Record<string, number> = {};
  for (const probe of o.probes) statuses[probe.status] = (statuses[probe.status] ?? 0) + 1;
  const figures = {
    queriedRewards: targeted,
    singlesSent: o.singles.length,
    singlesAccepted: o.accepted.length,
    singlesDuringOutage: duringOutage.length,
    resumeMs,
    bulkResult: bulkStatus.result,
    probes: { count: o.probes.length, maxMs: Math.max(0, ...o.probes.map((p) => p.ms)), statuses },
  };
  return { checks, figures };
}
