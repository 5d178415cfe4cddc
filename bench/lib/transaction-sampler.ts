import pg from 'pg';
import { round } from './percentiles.js';

/**
 * The longest open transaction of the worker processes, sampled from pg_stat_activity every
 * `intervalMs`. A sample sees a transaction at some point of its life, so the figure can fall short
 * of the truth by up to one interval.
 */
export class TransactionSampler {
  private client: pg.Client | null = null;
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  private longestMs = 0;
  private samples = 0;
  private sampleErrors = 0;

  constructor(
    private readonly databaseUrl: string,
    private readonly applicationName = 'rewards-worker',
    private readonly intervalMs = 50,
  ) {}

  async start(): Promise<this> {
    this.client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'rewards-bench-sampler' });
    this.client.on('error', () => {});
    await this.client.connect();
    this.running = true;
    const client = this.client;
    this.loop = (async () => {
      while (this.running) {
        try {
          const { rows } = await client.query<{ ms: number | null }>(
            `SELECT (extract(epoch FROM max(clock_timestamp() - xact_start)) * 1000)::float8 AS ms
             FROM pg_stat_activity
             WHERE application_name = $1 AND datname = current_database() AND xact_start IS NOT NULL`,
            [this.applicationName],
          );
          this.samples += 1;
          this.longestMs = Math.max(this.longestMs, rows[0]?.ms ?? 0);
        } catch {
          this.sampleErrors += 1;
        }
        await new Promise((resolve) => setTimeout(resolve, this.intervalMs));
      }
    })();
    return this;
  }

  async stop(): Promise<{ longestMs: number; samples: number; sampleErrors: number }> {
    this.running = false;
    await this.loop;
    await this.client?.end().catch(() => {});
    return { longestMs: round(this.longestMs), samples: this.samples, sampleErrors: this.sampleErrors };
  }
}
