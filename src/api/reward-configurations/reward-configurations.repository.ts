import { type Kysely, sql, type Transaction } from 'kysely';
import type { ConfigurationStatus, Database, RewardType } from '../../shared/db/schema.js';
import { compactJson } from './compact-json.js';

export interface ConfigurationFilter {
  merchantId: string;
  /** One configuration: the admin API answers a creation with exactly what readAll shows. */
  id?: string;
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
  return compactJson(result.rows[0]?.body ?? '[]');
}

export async function countConfigurations(db: Kysely<Database>, filter: ConfigurationFilter): Promise<number> {
  const result = await sql<{ total: string }>`
    SELECT count(*) AS total FROM reward_configurations rc WHERE ${whereClause(filter)}
  `.execute(db);
  return Number(result.rows[0]?.total ?? 0);
}

function whereClause(filter: ConfigurationFilter) {
  const conditions = [sql`rc.merchant_id = ${filter.merchantId}`];
  if (filter.id !== undefined) conditions.push(sql`rc.id = ${filter.id}`);
  if (filter.name !== undefined) conditions.push(sql`strpos(lower(rc.name), lower(${filter.name})) > 0`);
  if (filter.status !== undefined) conditions.push(sql`rc.status = ${filter.status}`);
  if (filter.rewardType !== undefined) conditions.push(sql`rc.reward_type = ${filter.rewardType}`);
  return sql.join(conditions, sql` AND `);
}

/** One configuration as a readAll element (JSON text), or undefined when the merchant has no such one. */
export async function selectConfigurationJson(
  db: Kysely<Database>,
  merchantId: string,
  id: string,
): Promise<string | undefined> {
  const array = await selectConfigurationsJson(db, { merchantId, id });
  // A json_agg of one element is `[<element>]`: the element's text is kept byte for byte.
  return array === '[]' ? undefined : array.slice(1, -1);
}

export interface NewConfiguration {
  merchantId: string;
  externalId: string | null;
  name: string;
  status: ConfigurationStatus;
  rewardType: RewardType;
  numberOfFreeBets: number;
  startDate: Date;
  endDate: Date;
  durationMinutes: number;
  games: ReadonlyArray<{
    gameId: number;
    /** Keyed by currency code; amounts as decimal text. */
    betConstraints: Readonly<Record<string, { betAmount: string; maxWinPerBet: string }>>;
  }>;
}

/**
 * The configuration, its games and their bet constraints: three statements, in the caller's
 * transaction so that a half-written configuration is never visible. Game ids are unique within a
 * configuration, which is how the returned game rows are matched to their constraints.
 */
export async function insertRewardConfiguration(trx: Transaction<Database>, configuration: NewConfiguration) {
  const { id } = await trx
    .insertInto('reward_configurations')
    .values({
      merchant_id: configuration.merchantId,
      external_id: configuration.externalId,
      name: configuration.name,
      status: configuration.status,
      reward_type: configuration.rewardType,
      number_of_free_bets: configuration.numberOfFreeBets,
      start_date: configuration.startDate,
      end_date: configuration.endDate,
      duration_minutes: configuration.durationMinutes,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (configuration.games.length === 0) return id;

  const games = await trx
    .insertInto('game_reward_configurations')
    .values(configuration.games.map((game) => ({ reward_configuration_id: id, game_id: game.gameId })))
    .returning(['id', 'game_id'])
    .execute();
  const gameRowIds = new Map(games.map((row) => [row.game_id, row.id]));
  const constraints = configuration.games.flatMap((game) =>
    Object.entries(game.betConstraints).map(([currency, amounts]) => ({
      game_reward_configuration_id: gameRowIds.get(game.gameId) as string,
      currency,
      bet_amount: amounts.betAmount,
      max_win_per_bet: amounts.maxWinPerBet,
    })),
  );
  if (constraints.length > 0) await trx.insertInto('bet_constraints').values(constraints).execute();
  return id;
}

/** Which of `ids` are configurations of this merchant. */
export async function findMerchantConfigurationIds(
  db: Kysely<Database>,
  merchantId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('reward_configurations')
    .select('id')
    .where('merchant_id', '=', merchantId)
    .where('id', '=', sql<string>`ANY(${[...ids]}::uuid[])`)
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** Name of the unique index behind "one externalId per merchant" (the migration's). */
export const CONFIGURATION_EXTERNAL_ID_KEY = 'reward_configurations_merchant_external_id_key';
