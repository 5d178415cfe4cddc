import { type Kysely, sql } from 'kysely';
import type { ConfigurationStatus, Database, RewardType } from '../db/schema.js';

export interface ConfigurationFilter {
  merchantId: string;
  /** Case-insensitive substring; `%` and `_` are plain characters. */
  name?: string;
  status?: ConfigurationStatus;
  rewardType?: RewardType;
}

export interface ConfigurationPage {
  limit: number;
  offset: number;
}

/**
 * The readAll answer, built by Postgres as JSON text. Numeric amounts go out exactly as stored (no
 * trip through a JavaScript number), and the API passes the text through without re-encoding it.
 */
export async function selectConfigurationsJson(
  db: Kysely<Database>,
  filter: ConfigurationFilter,
  page?: ConfigurationPage,
): Promise<string> {
  const result = await sql<{ body: string }>`
    WITH page AS (
      SELECT rc.*
      FROM reward_configurations rc
      WHERE ${whereClause(filter)}
      ORDER BY rc.start_date DESC, rc.id
      ${page ? sql`LIMIT ${page.limit} OFFSET ${page.offset}` : sql``}
    )
    SELECT coalesce(json_agg(
      json_build_object(
        'id', p.id,
        'name', p.name,
        'status', p.status,
        'rewardType', p.reward_type,
        'numberOfFreeBets', p.number_of_free_bets,
        'startDate', (extract(epoch FROM p.start_date) * 1000)::bigint,
        'endDate', (extract(epoch FROM p.end_date) * 1000)::bigint,
        'duration', p.duration_minutes,
        'merchantId', p.merchant_id,
        'games', (
          SELECT coalesce(json_agg(
            json_build_object(
              'id', g.id,
              'gameId', g.game_id,
              'betConstraints', (
                SELECT coalesce(json_object_agg(
                  bc.currency,
                  json_build_object('betAmount', bc.bet_amount, 'maxWinPerBet', bc.max_win_per_bet)
                  ORDER BY bc.currency
                ), '{}'::json)
                FROM bet_constraints bc
                WHERE bc.game_reward_configuration_id = g.id
              )
            ) ORDER BY g.game_id
          ), '[]'::json)
          FROM game_reward_configurations g
          WHERE g.reward_configuration_id = p.id
        )
      ) ORDER BY p.start_date DESC, p.id
    ), '[]'::json)::text AS body
    FROM page p
  `.execute(db);
  return result.rows[0]?.body ?? '[]';
}

export async function countConfigurations(db: Kysely<Database>, filter: ConfigurationFilter): Promise<number> {
  const result = await sql<{ total: string }>`
    SELECT count(*) AS total FROM reward_configurations rc WHERE ${whereClause(filter)}
  `.execute(db);
  return Number(result.rows[0]?.total ?? 0);
}

function whereClause(filter: ConfigurationFilter) {
  const conditions = [sql`rc.merchant_id = ${filter.merchantId}`];
  if (filter.name !== undefined) conditions.push(sql`strpos(lower(rc.name), lower(${filter.name})) > 0`);
  if (filter.status !== undefined) conditions.push(sql`rc.status = ${filter.status}`);
  if (filter.rewardType !== undefined) conditions.push(sql`rc.reward_type = ${filter.rewardType}`);
  return sql.join(conditions, sql` AND `);
}
