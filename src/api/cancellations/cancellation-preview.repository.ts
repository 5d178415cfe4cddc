import { type Kysely, sql } from 'kysely';
import { configurationCondition, type QueryFilter } from '../../shared/cancellations/query-filter.js';
import type { Database } from '../../shared/db/schema.js';

/**
 * What a cancel request would do now, read without changing anything (a dry run). The counts follow
 * the job's rules (src/worker/cancellations/query-cancellations.repository.ts): `cancellable` is what the job would count as
 * `cancelled`; a reward named by both lists counts once; `notFound` counts identifiers. Each is one
 * statement whatever the number of identifiers; it reads committed data, so a cancel running at the
 * same time may make the job's result differ.
 */

export interface IdentifierPreview {
  cancellable: number;
  alreadyCancelled: number;
  notCancellable: number;
  notFound: number;
}

/**
 * Each identifier is looked up through its index (a join on the unnested list: `id = ANY(…)` with
 * 10,000 ids made the planner scan the whole table: slower than the index, and worse as the table grows).
 * `ids` and `externalIds` must be distinct (the route collapses them): a reward id matches at most one
 * reward, and so does an external id within a merchant (unique), so the identifiers that matched
 * nothing are the list lengths minus the matches.
 */
export async function previewCancelByIdentifiers(
  db: Kysely<Database>,
  params: { merchantId: string; ids: readonly string[]; externalIds: readonly string[] },
): Promise<IdentifierPreview> {
  const { merchantId, ids, externalIds } = params;
  const result = await sql<IdentifierPreview>`
    WITH by_id AS MATERIALIZED (
      SELECT r.id, r.status
      FROM unnest(${ids}::uuid[]) AS i(id)
      JOIN rewards r ON r.id = i.id AND r.merchant_id = ${merchantId}
    ),
    by_external_id AS MATERIALIZED (
      SELECT r.id, r.status
      FROM unnest(${externalIds}::text[]) AS e(external_id)
      JOIN rewards r ON r.merchant_id = ${merchantId} AND r.external_id = e.external_id
    ),
    matched AS (
      SELECT id, status FROM by_id UNION SELECT id, status FROM by_external_id
    )
    SELECT
      count(*) FILTER (WHERE status = 'ACTIVE')::int AS cancellable,
      count(*) FILTER (WHERE status = 'CANCELLED')::int AS "alreadyCancelled",
      count(*) FILTER (WHERE status IN ('USED', 'EXPIRED'))::int AS "notCancellable",
      (${ids.length}::int - (SELECT count(*) FROM by_id)::int)
        + (${externalIds.length}::int - (SELECT count(*) FROM by_external_id)::int) AS "notFound"
    FROM matched
  `.execute(db);
  return result.rows[0] ?? { cancellable: 0, alreadyCancelled: 0, notCancellable: 0, notFound: 0 };
}

/**
 * ACTIVE rewards of these players (and configuration): what a bulkCancelByQuery would cancel now.
 * Counted through the player index; `status` is read from the rows, as no index may hold it (a cancel
 * writes it, and must stay a HOT update).
 */
export async function previewCancelOfPlayers(
  db: Kysely<Database>,
  params: { merchantId: string; playerIds: readonly string[]; filter: QueryFilter },
): Promise<number> {
  const { merchantId, playerIds, filter } = params;
  const result = await sql<{ cancellable: number }>`
    SELECT count(*)::int AS cancellable
    FROM rewards r
    WHERE r.merchant_id = ${merchantId}
      AND r.player_id = ANY(${playerIds}::text[])
      AND r.status = 'ACTIVE'
      ${configurationCondition(merchantId, filter)}
  `.execute(db);
  return result.rows[0]?.cancellable ?? 0;
}
