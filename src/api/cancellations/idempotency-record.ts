import { randomBytes } from 'node:crypto';

/**
 * The value of an idempotency or replay record (idempotency.ts describes the kinds): the request's
 * fingerprint cut to FINGERPRINT_CHARS, one letter for the kind, and what that kind holds. Kept short:
 * records are many (docs/scaling.md).
 */

/** Characters of the fingerprint kept in a record: 120 bits, ample against a chance match. */
const FINGERPRINT_CHARS = 20;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A UUID's 16 bytes in base64url: 22 characters. */
const PACKED_UUID_CHARS = 22;

function packUuid(jobId: string): string {
  return Buffer.from(jobId.replaceAll('-', ''), 'hex').toString('base64url');
}

function unpackUuid(packed: string): string {
  const hex = Buffer.from(packed, 'base64url').toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function pendingRecord(fingerprint: string, plannedJobId: string | undefined, now: number): string {
  const head = fingerprint.slice(0, FINGERPRINT_CHARS);
  if (plannedJobId === undefined) return `${head}t${randomBytes(12).toString('base64url')}`;
  return `${head}p${packUuid(plannedJobId)}${now.toString(36)}`;
}

export function doneRecord(fingerprint: string, jobId: string): string {
  const id = UUID.test(jobId) ? `j${packUuid(jobId)}` : `J${jobId}`;
  return `${fingerprint.slice(0, FINGERPRINT_CHARS)}${id}`;
}

export interface StoredRecord {
  fingerprint: string;
  /** The job id answered, once stored; undefined while the first request stores it. */
  jobId?: string;
  /** A bulk request's pending record: the id its job is stored under, and when the key was claimed. */
  planned?: { jobId: string; claimedAt: number };
}

export function readRecord(value: string): StoredRecord {
  const fingerprint = value.slice(0, FINGERPRINT_CHARS);
  const kind = value[FINGERPRINT_CHARS];
  const rest = value.slice(FINGERPRINT_CHARS + 1);
  if (kind === 'J') return { fingerprint, jobId: rest };
  if (kind === 'j') return { fingerprint, jobId: unpackUuid(rest) };
  if (kind === 'p') {
    const jobId = unpackUuid(rest.slice(0, PACKED_UUID_CHARS));
    return { fingerprint, planned: { jobId, claimedAt: Number.parseInt(rest.slice(PACKED_UUID_CHARS), 36) } };
  }
  return { fingerprint };
}

/** Whether a record was made for a request with this fingerprint. */
export function sameFingerprint(record: StoredRecord, fingerprint: string): boolean {
  return record.fingerprint === fingerprint.slice(0, FINGERPRINT_CHARS);
}
