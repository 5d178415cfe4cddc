import { type MerchantCredentials, signedBody } from './merchant-client.js';
import { percentile, round } from './percentiles.js';
import { sleep } from './progress.js';

export const READ_ALL_PATH = '/api/v1/integration/reward-configurations/readAll';

export interface StreamSummary {
  requests: number;
  errors: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  firstError: string | null;
}

/** What one stream saw: every answer's latency, and its failures. */
export interface StreamRecord {
  latencies: number[];
  errors: number;
  firstError: string | null;
}

export interface ReadAllStream {
  stop(): Promise<StreamRecord>;
}

/** Percentiles over the answers of one or more streams, pooled. */
export function summarise(records: readonly StreamRecord[]): StreamSummary {
  const latencies = records.flatMap((record) => record.latencies);
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
 * A light, steady stream of signed readAll requests: `connections` loops, each sending one request
 * every `connections / requestsPerSecond` seconds (or at once when the previous answer came late).
 * Latency is measured from just before the request to its whole body, in microsecond resolution.
 */
export function startReadAllStream(
  baseUrl: string,
  merchant: MerchantCredentials,
  options: { connections: number; requestsPerSecond: number },
): ReadAllStream {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  let running = true;
  const intervalMs = (options.connections * 1000) / options.requestsPerSecond;

  const recordError = (message: string) => {
    errors += 1;
    firstError ??= message;
  };

  const loop = async (index: number) => {
    let next = performance.now() + (index * intervalMs) / options.connections;
    while (running) {
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
      if (!running) break;
      next += intervalMs;
      const started = performance.now();
      try {
        const response = await fetch(`${baseUrl}${READ_ALL_PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(signedBody(merchant)),
        });
        const text = await response.text();
        const elapsed = performance.now() - started;
        if (response.status === 200) latencies.push(elapsed);
        else recordError(`readAll answered ${response.status}: ${text.slice(0, 200)}`);
      } catch (error) {
        recordError(`readAll failed: ${(error as Error).message}`);
      }
      next = Math.max(next, performance.now());
    }
  };

  const loops = Array.from({ length: options.connections }, (_, index) => loop(index));
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return { latencies, errors, firstError };
    },
  };
}
