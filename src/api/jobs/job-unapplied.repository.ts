import { sql } from 'kysely';
import type { Db } from '../../shared/db/client.js';

type IdentifierKind = 'id' | 'externalId';
type UnappliedOutcome = 'notFound' | 'notCancellable' | 'alreadyCancelled';

interface UnappliedIdentifier {
  kind: IdentifierKind;
  identifier: string;
  outcome: UnappliedOutcome;
}

/** Where a page starts: just after this key (the page order is the table's key: kind, then identifier). */
export interface UnappliedCursor {
  kind: IdentifierKind;
  identifier: string;
}

export interface UnappliedPage {
  identifiers: UnappliedIdentifier[];
  /** The key of the page's last entry when more follow. */
  next: UnappliedCursor | null;
}

/**
 * One keyset page of the identifiers a by-id job did not cancel (job_unapplied_identifiers, written by
 * the worker's batches): a range scan of the primary key, so every page costs the same however deep.
 */
export async function listUnappliedIdentifiers(
  db: Db,
  params: { merchantId: string; jobId: string; after: UnappliedCursor | undefined; limit: number },
): Promise<UnappliedPage> {
  const { merchantId, jobId, after, limit } = params;
  const start = after ? sql`AND (kind, identifier) > (${after.kind}, ${after.identifier})` : sql``;
  const { rows } = await sql<UnappliedIdentifier>`
    SELECT kind, identifier, outcome FROM job_unapplied_identifiers
    WHERE merchant_id = ${merchantId}::uuid AND job_id = ${jobId}::uuid ${start}
    ORDER BY kind, identifier
    LIMIT ${limit + 1}
  `.execute(db);
  const identifiers = rows.slice(0, limit);
  const last = identifiers.at(-1);
  const next = rows.length > limit && last ? { kind: last.kind, identifier: last.identifier } : null;
  return { identifiers, next };
}
