import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { MerchantCredentials } from './merchant-client.js';
import { percentile, round } from './percentiles.js';

export interface StreamSummary {
  requests: number;
  errors: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  firstError: string | null;
}

/** One answer: when its request was sent (epoch ms, sub-millisecond) and how long the whole answer took. */
export interface StreamSample {
  sentAt: number;
  ms: number;
}

/** What one stream saw: every answer's latency, and its failures. */
export interface StreamRecord {
  samples: StreamSample[];
  errors: number;
  firstError: string | null;
}

/**
 * The answers to requests sent between `from` and `to` (epoch ms): a stream opened around a piece of work
 * (a bulk cancel) is judged on the requests that met it, not on whatever the bench did before or after.
 * Errors are kept whole: a failure anywhere in the stream counts.
 */
export function sentBetween(record: StreamRecord, from: number, to: number): StreamRecord {
  return { ...record, samples: record.samples.filter((sample) => sample.sentAt >= from && sample.sentAt <= to) };
}

export interface ReadAllStream {
  stop(): Promise<StreamRecord>;
}

/** Percentiles over the answers of one or more streams, pooled. */
export function summarise(records: readonly StreamRecord[]): StreamSummary {
  const latencies = records.flatMap((record) => record.samples.map((sample) => sample.ms));
  const errors = records.reduce((sum, record) => sum + record.errors, 0);
  const rounded = (value: number | null) => (value === null ? null : round(value, 2));
  return {
    requests: latencies.length + errors,
    errors,
    p50Ms: rounded(percentile(latencies, 50)),
    p99Ms: rounded(percentile(latencies, 99)),
    maxMs: rounded(latencies.length > 0 ? Math.max(...latencies) : null),
    firstError: records.find((record) => record.firstError !== null)?.firstError ?? null,
  };
}

/**
 * Light, steady streams of signed readAll requests (see read-all-stream.child.ts), sent by a process of
 * their own: a latency measured in the bench's own event loop would also count the bench's work (polling
 * the job, sampling Postgres, building requests, its garbage collection), which happens during a cancel
 * and not while idle. One process serves every stream of the bench, so only the first (a warm-up)
 * meets its cold start.
 */
export class ReadAllStreams {
  private readonly exited: Promise<unknown>;

  private constructor(private readonly child: ChildProcess) {
    this.exited = once(child, 'exit');
    // Nothing to wait for when it is already gone; a stream started afterwards reports the exit.
    this.exited.catch(() => {});
  }

  static open(): ReadAllStreams {
    const child = fork(fileURLToPath(new URL('./read-all-stream.child.ts', import.meta.url)), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new ReadAllStreams(child);
  }

  /** Starts a stream; resolves once it is sending. */
  async start(request: StreamRequest): Promise<ReadAllStream> {
    await this.exchange({ start: request });
    return { stop: async () => (await this.exchange('stop')) as StreamRecord };
  }

  /** Ends the process (after the last stream has stopped). */
  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.disconnect();
    await this.exited;
  }

  /** One message to the process and its one answer. */
  private async exchange(message: StreamCommand): Promise<unknown> {
    const answer = once(this.child, 'message');
    this.child.send(message);
    const gone = this.exited.then(() => Promise.reject(new Error('the readAll stream process exited')));
    const [reply] = (await Promise.race([answer, gone])) as [unknown];
    return reply;
  }
}

/** A stream's settings. */
export interface StreamRequest {
  baseUrl: string;
  merchant: MerchantCredentials;
  connections: number;
  requestsPerSecond: number;
}

/** What the stream process is told: start a stream, or stop the running one and send back its record. */
export type StreamCommand = { start: StreamRequest } | 'stop';
