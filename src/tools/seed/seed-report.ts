/** What a seed run made, as returned in-process; `toPrintedReport` trims it for the CLI's stdout. */

export interface SeededMerchant {
  id: string;
  name: string;
  secretKey: string;
  configurationIds: string[];
  /** Player ids sort in creation order (`player-000001` …), so first/last/count describe them all. */
  playerIds: { first: string | null; last: string | null; count: number };
  sampleRewardIds: string[];
  /** In-process: every session token made (a benchmark needs them all); printed: the first five. */
  sessionTokens: string[];
  /** Demo set only: a token whose session has expired (`/betSlip` answers errorCode 9). */
  expiredSessionTokens?: string[];
  /** Demo set only: external ids of sample rewards, for cancel by externalId. */
  sampleRewardExternalIds?: string[];
}

export interface SeedTotals {
  configurations: number;
  players: number;
  rewards: number;
  sessions: number;
}

export interface SeedReport {
  merchants: SeededMerchant[];
  totals: SeedTotals;
  /** Demo set only: rows inserted by this run (all zero on a second run). */
  inserted?: SeedTotals & { merchants: number };
  ms: number;
}

const PRINTED_SAMPLES = 5;

export function toPrintedReport(report: SeedReport): SeedReport {
  return {
    ...report,
    merchants: report.merchants.map((merchant) => ({
      ...merchant,
      sampleRewardIds: merchant.sampleRewardIds.slice(0, PRINTED_SAMPLES),
      sessionTokens: merchant.sessionTokens.slice(0, PRINTED_SAMPLES),
    })),
  };
}
