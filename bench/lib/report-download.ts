import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { createGunzip } from 'node:zlib';
import { type MerchantCredentials, signedBody } from './merchant-client.js';

/** One `jobs/report` download as read: its size, lines, outcome counts and whether its checksum line holds. */
export interface ReadReport {
  bytesOnWire: number;
  lines: number;
  counts: Record<string, number>;
  checksumHolds: boolean;
  summary: Record<string, unknown>;
}

/**
 * Downloads the report without keeping it: hashes and counts its lines as they arrive (decoding gzip in
 * a stream), so the bench's own memory stays flat too. `bytesPerSecond` paces the reading (the socket
 * is paused between chunks), as a slow client does. `probeOnly` answers the status code alone.
 */
export function downloadReport(
  baseUrl: string,
  merchant: MerchantCredentials,
  jobId: string,
  options: { gzip: boolean; bytesPerSecond?: number; probeOnly?: boolean },
): Promise<number | ReadReport> {
  const body = JSON.stringify(signedBody(merchant, { jobId }));
  return new Promise((resolve, reject) => {
    const outgoing = request(
      new URL('/api/v1/integration/jobs/report', baseUrl),
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(options.gzip ? { 'accept-encoding': 'gzip' } : {}) },
      },
      (incoming) => {
        if (options.probeOnly) {
          // The status alone: the body is not read, the connection closed.
          incoming.destroy();
          resolve(incoming.statusCode ?? 0);
          return;
        }
        if (incoming.statusCode !== 200) {
          incoming.resume();
          incoming.on('end', () => resolve(incoming.statusCode ?? 0));
          return;
        }
        let bytesOnWire = 0;
        const started = performance.now();
        incoming.on('data', (chunk: Buffer) => {
          bytesOnWire += chunk.length;
          if (!options.bytesPerSecond) return;
          const due = (bytesOnWire / options.bytesPerSecond) * 1_000 - (performance.now() - started);
          if (due > 0) {
            incoming.pause();
            setTimeout(() => incoming.resume(), due);
          }
        });
        const decoded = options.gzip ? incoming.pipe(createGunzip()) : incoming;
        const hash = createHash('sha256');
        const counts: Record<string, number> = {};
        let lines = 0;
        let carry = '';
        let summary: Record<string, unknown> | null = null;
        decoded.setEncoding('utf8');
        decoded.on('data', (text: string) => {
          const parts = (carry + text).split('\n');
          carry = parts.pop() ?? '';
          for (const line of parts) {
            const parsed = JSON.parse(line) as { outcome?: string; summary?: Record<string, unknown> };
            if (parsed.summary) {
              summary = parsed.summary;
              continue;
            }
            hash.update(`${line}\n`);
            lines += 1;
            const outcome = parsed.outcome ?? 'none';
            counts[outcome] = (counts[outcome] ?? 0) + 1;
          }
        });
        decoded.on('error', reject);
        decoded.on('end', () => {
          if (!summary) return reject(new Error('the report ended without its summary line'));
          const found = summary as Record<string, unknown>;
          resolve({ bytesOnWire, lines, counts, checksumHolds: hash.digest('hex') === found.sha256, summary: found });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
