import { createHash } from 'node:crypto';
import { request } from 'node:http';
import type { TestApi } from './api.js';
import type { MerchantCredentials } from './signing.js';
import { signedBody } from './signing.js';

export const jobReportPath = '/api/v1/integration/jobs/report';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body exactly as it came over the socket: still gzip-encoded when the server encoded it. */
  body: Buffer;
}

/**
 * Asks for a job's report over a plain node:http request, which (unlike fetch) leaves a gzip body as
 * it came, so a test sees what the server sent.
 */
export function fetchJobReport(
  api: TestApi,
  merchant: MerchantCredentials,
  jobId: string,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  const payload = JSON.stringify(signedBody(merchant, { jobId }));
  const url = new URL(jobReportPath, api.baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () =>
          resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks) }),
        );
        incoming.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

export interface ParsedReport {
  lines: Record<string, unknown>[];
  summary: Record<string, unknown>;
  /** Whether the summary's sha256 is the SHA-256 of every byte before the summary line. */
  checksumHolds: boolean;
}

/** Splits a decoded report into its lines and its summary, and checks the checksum as a client would. */
export function parseJobReport(decoded: Buffer): ParsedReport {
  const text = decoded.toString('utf8');
  if (!text.endsWith('\n')) throw new Error('a report ends with a newline');
  const summaryStart = text.lastIndexOf('\n', text.length - 2) + 1;
  const summaryLine = JSON.parse(text.slice(summaryStart)) as { summary?: Record<string, unknown> };
  if (!summaryLine.summary) throw new Error('the last line is not the summary');
  const body = decoded.subarray(0, Buffer.byteLength(text.slice(0, summaryStart)));
  const lines = text
    .slice(0, summaryStart)
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const checksumHolds = createHash('sha256').update(body).digest('hex') === summaryLine.summary.sha256;
  return { lines, summary: summaryLine.summary, checksumHolds };
}
