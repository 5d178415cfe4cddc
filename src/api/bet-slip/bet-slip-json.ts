/** One bet slip item of a session, as the admin API takes it and the seeds write it. */
export interface BetSlipItemInput {
  sportId: string;
  sportName: string;
  betSlipId: string | null;
  matchName: string;
  matchId: string;
  competitionId: string;
  competitionName: string;
  marketId: string;
  marketName: string;
  marketOptionId: string;
  marketOptionName: string;
  odd: number;
  margin: number | null;
  homeTeam: string;
  awayTeam: string;
}

/**
 * A session's bet slip items as the JSON array /betSlip answers (docs/interface.md): fields in the
 * interface's order, `betSlipId` left out when unknown, `margin` kept as null where the market has
 * none. Written once, when the session is created (`sessions.bet_slip_json`), since a session's
 * items never change: /betSlip then splices this text into its answer instead of building it per read
 * (src/api/library-bypasses/bet-slip-answer.ts; measured on Node 24, building the answer with `c.json`
 * from columns instead cost +24 % CPU per /betSlip answer).
 */
export function betSlipJson(items: readonly BetSlipItemInput[]): string {
  return JSON.stringify(
    items.map((item) => ({
      sportId: item.sportId,
      sportName: item.sportName,
      ...(item.betSlipId === null ? {} : { betSlipId: item.betSlipId }),
      matchName: item.matchName,
      matchId: item.matchId,
      competitionId: item.competitionId,
      competitionName: item.competitionName,
      marketId: item.marketId,
      marketName: item.marketName,
      marketOptionId: item.marketOptionId,
      marketOptionName: item.marketOptionName,
      odd: item.odd,
      margin: item.margin,
      homeTeam: item.homeTeam,
      awayTeam: item.awayTeam,
    })),
  );
}
