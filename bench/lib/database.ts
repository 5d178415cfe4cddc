import pg from 'pg';
import { sleep } from './progress.js';

/**
 * The benchmark's own databases on DATABASE_URL's server, never the developer's:
 * - `<base>_seed`: migrated and seeded once, then only ever used as a template;
 * - `<base>`: the database the services run on, cloned from the template before every run that
 *   needs fresh data (a file copy: under a second, and byte for byte the same rows, indexes and
 *   visibility every time, which a re-seed or a TRUNCATE and reload would not quite give).
 * The base name carries this process's id, so two runs cannot collide and leftovers of a run that
 * was killed can be recognised and dropped by the next one.
 */
const DATABASE_PREFIX = 'rewards_bench_';
const LEFTOVER = /^rewards_bench_(\d+)(_seed)?$/;

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export class BenchDatabases {
  readonly liveName: string;
  readonly seedName: string;
  private readonly admin: pg.Pool;

  constructor(
    private readonly serverUrl: string,
    runId: number,
  ) {
    this.liveName = `${DATABASE_PREFIX}${runId}`;
    this.seedName = `${this.liveName}_seed`;
    // The administrative connection only creates and drops databases; it goes to DATABASE_URL's own
    // database, which is never written to.
    this.admin = new pg.Pool({ connectionString: serverUrl, max: 1, application_name: 'rewards-bench-admin' });
    this.admin.on('error', () => {});
  }

  get liveUrl(): string {
    return withDatabase(this.serverUrl, this.liveName);
  }

  get seedUrl(): string {
    return withDatabase(this.serverUrl, this.seedName);
  }

  /** Drops the databases of earlier runs whose process is gone (a run killed before its cleanup). */
  async dropLeftovers(isRunning: (pid: number) => boolean): Promise<string[]> {
    const { rows } = await this.admin.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE datname LIKE $1',
      [`${DATABASE_PREFIX}%`],
    );
    const dropped: string[] = [];
    for (const { datname } of rows) {
      const match = LEFTOVER.exec(datname);
      if (!match || isRunning(Number(match[1]))) continue;
      await this.drop(datname);
      dropped.push(datname);
    }
    return dropped;
  }

  async createSeedDatabase(): Promise<void> {
    await this.drop(this.seedName);
    await this.admin.query(`CREATE DATABASE ${quoteIdent(this.seedName)}`);
  }

  /**
   * Fresh statistics and visibility for the template: every clone starts with its rows all-visible
   * and analysed, so no run pays for hint bits or an autovacuum the others did not.
   */
  async settleSeedDatabase(): Promise<void> {
    const client = new pg.Client({ connectionString: this.seedUrl, application_name: 'rewards-bench-admin' });
    await client.connect();
    try {
      await client.query('VACUUM (ANALYZE)');
      await client.query('CHECKPOINT');
    } finally {
      await client.end();
    }
  }

  /** (Re)creates the live database as a copy of the seeded template. The services must be stopped. */
  async cloneFreshLive(): Promise<void> {
    await this.drop(this.liveName);
    for (let attempt = 1; ; attempt++) {
      try {
        // FILE_COPY: a checkpoint, then a copy of the files; the clone starts with nothing dirty.
        await this.admin.query(
          `CREATE DATABASE ${quoteIdent(this.liveName)} TEMPLATE ${quoteIdent(this.seedName)} STRATEGY FILE_COPY`,
        );
        return;
      } catch (error) {
        // 55006: the template is in use, by an autovacuum worker typically. Only our own template's
        // sessions are ever ended here.
        if ((error as { code?: string }).code !== '55006' || attempt >= 20) throw error;
        if (attempt % 5 === 0) {
          await this.admin.query(
            'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
            [this.seedName],
          );
        }
        await sleep(200 * attempt);
      }
    }
  }

  async serverVersion(): Promise<string> {
    const { rows } = await this.admin.query<{ server_version: string }>('SHOW server_version');
    return rows[0]?.server_version ?? 'unknown';
  }

  /**
   * Drops both databases (connections and all). The template goes first: a clone still being made
   * when cleanup starts (Ctrl-C) holds it, so its drop waits for the clone, which the second drop
   * then removes; none can start after it.
   */
  async dropAll(): Promise<void> {
    await this.drop(this.seedName);
    await this.drop(this.liveName);
  }

  async close(): Promise<void> {
    await this.admin.end();
  }

  private async drop(name: string): Promise<void> {
    if (!name.startsWith(DATABASE_PREFIX)) throw new Error(`refusing to drop ${name}: not a benchmark database`);
    await this.admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
  }
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
