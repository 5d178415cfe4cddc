import { type Kysely, sql } from 'kysely';

/**
 * Each session's bet slip items as the JSON array /betSlip answers, written once with the session.
 *
 * A session's items never change after it is created, yet /betSlip built their JSON on every read: a
 * json_agg over the session's `bet_slip_items` rows, on the database's share of two cores. Written
 * once at creation (src/shared/bet-slip-json.ts), the read is one indexed lookup that joins only what
 * must be fresh (the wallet balance, the player's profile). `bet_slip_items` stays the items' record.
 *
 * `json`, not text: Postgres checks the text is JSON, which /betSlip splices into its answer as is;
 * `json` (unlike `jsonb`) keeps the text as written, key order included.
 *
 * Sessions created before this migration get the same compact text from their rows here. The one
 * difference from the writer: Postgres writes a double below 1e-4 or from 1e15 on with an exponent
 * (`1e-05`), where JavaScript does not; the same number either way.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE sessions ADD COLUMN bet_slip_json json`.execute(db);
  await sql`
    UPDATE sessions s SET bet_slip_json = coalesce((
      SELECT '[' || string_agg(
        '{"sportId":' || to_json(b.sport_id)::text
          || ',"sportName":' || to_json(b.sport_name)::text
          || coalesce(',"betSlipId":' || to_json(b.bet_slip_id)::text, '')
          || ',"matchName":' || to_json(b.match_name)::text
          || ',"matchId":' || to_json(b.match_id)::text
          || ',"competitionId":' || to_json(b.competition_id)::text
          || ',"competitionName":' || to_json(b.competition_name)::text
          || ',"marketId":' || to_json(b.market_id)::text
          || ',"marketName":' || to_json(b.market_name)::text
          || ',"marketOptionId":' || to_json(b.market_option_id)::text
          || ',"marketOptionName":' || to_json(b.market_option_name)::text
          || ',"odd":' || to_json(b.odd)::text
          || ',"margin":' || coalesce(to_json(b.margin)::text, 'null')
          || ',"homeTeam":' || to_json(b.home_team)::text
          || ',"awayTeam":' || to_json(b.away_team)::text
          || '}',
        ',' ORDER BY b.position
      ) || ']'
      FROM bet_slip_items b
      WHERE b.session_id = s.id
    ), '[]')::json
  `.execute(db);
  await sql`ALTER TABLE sessions ALTER COLUMN bet_slip_json SET NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE sessions DROP COLUMN bet_slip_json`.execute(db);
}
