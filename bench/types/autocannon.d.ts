/**
 * The part of autocannon's programmatic API the benchmark uses (the package ships no types).
 * Checked against node_modules/autocannon/README.md and lib/ (v8).
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface RequestParams {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
    }

    interface Request extends RequestParams {
      /** Called for every request sent (and once when a connection is built); returns the request to send. */
      setupRequest?: (request: RequestParams, context: Record<string, unknown>) => RequestParams | null | undefined;
    }

    interface Options extends RequestParams {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Total requests; overrides duration. */
      amount?: number;
      /** Seconds before a request counts as timed out. */
      timeout?: number;
      pipelining?: number;
      overallRate?: number;
      requests?: Request[];
      /** Responses whose body it rejects count as mismatches. */
      verifyBody?: (body: string) => boolean;
    }

    /** hdr-histogram-percentiles-obj: latencies in milliseconds, requests per second sample. */
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p97_5: number;
      p99: number;
    }

    interface Result {
      /** Seconds. */
      duration: number;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
      latency: Histogram;
      requests: Histogram & { sent: number };
      throughput: Histogram;
    }

    interface Instance extends EventEmitter {
      stop(): void;
    }
  }

  function autocannon(
    options: autocannon.Options,
    callback: (error: Error | null, result: autocannon.Result) => void,
  ): autocannon.Instance;

  export = autocannon;
}
