import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** The report's last line: the job, its counts and the lines', and the checksum of the lines. */
export interface JobReportSummary {
  jobId: string;
  operation: string;
  state: string;
  result: Record<string, number> | null;
  lines: number;
  cancelled: number;
  alreadyCancelled: number;
  notCancellable: number;
  notFound: number;
  /** Hex SHA-256 of every byte of the report before its summary line. */
  sha256: string;
}

/** A report whose body did not arrive whole (no summary line) or whose checksum does not hold. */
export class JobReportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JobReportError';
  }
}

/**
 * Hashes a report as it passes, all but its last line: every byte up to the last newline that is not
 * the body's final one is hashed as soon as it is known not to start the summary line; what may still
 * be the summary is held back (one line at most, besides the chunk in hand).
 */
class ReportChecksum extends Transform {
  private readonly hash = createHash('sha256');
  private held: Buffer = Buffer.alloc(0);

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const data = this.held.length === 0 ? chunk : Buffer.concat([this.held, chunk]);
    // The last newline before the final byte ends every line that cannot be the last one.
    const cut = data.lastIndexOf(0x0a, data.length - 2);
    if (cut >= 0) {
      this.hash.update(data.subarray(0, cut + 1));
      this.held = Buffer.from(data.subarray(cut + 1));
    } else this.held = data;
    done(null, chunk);
  }

  /** The summary line and whether the checksum holds; after the stream ended. */
  verdict(): { summary: JobReportSummary; holds: boolean } {
    const last = this.held.toString('utf8');
    let parsed: { summary?: JobReportSummary };
    try {
      parsed = JSON.parse(last) as { summary?: JobReportSummary };
    } catch {
      throw new JobReportError('the report ended without its summary line: it is incomplete');
    }
    if (!last.endsWith('\n') || !parsed.summary) {
      throw new JobReportError('the report ended without its summary line: it is incomplete');
    }
    return { summary: parsed.summary, holds: this.hash.digest('hex') === parsed.summary.sha256 };
  }
}

/**
 * Writes a report's body to `path` (through `path.partial`, renamed once it verified), checking its
 * checksum on the way; the file is the NDJSON as the service wrote it, summary line included. A body
 * that ends early or does not match its checksum leaves no file and throws JobReportError.
 */
export async function saveJobReport(body: ReadableStream<Uint8Array>, path: string): Promise<JobReportSummary> {
  const partial = `${path}.partial`;
  const checksum = new ReportChecksum();
  try {
    await pipeline(
      Readable.fromWeb(body as import('node:stream/web').ReadableStream),
      checksum,
      createWriteStream(partial),
    );
    const { summary, holds } = checksum.verdict();
    if (!holds) throw new JobReportError('the report does not match its sha256: download it again');
    await rename(partial, path);
    return summary;
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}
