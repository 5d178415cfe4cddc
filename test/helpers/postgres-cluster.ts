import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './processes.js';
import { eventually } from './worker.js';

/**
 * A Postgres primary and a streaming standby of a test's own (`initdb`, then `pg_basebackup -R`), on
 * free ports and in a temporary directory, so that a test can pause the standby's replay and stop the
 * primary without touching the Postgres other sessions share. The servers are children of the test
 * process, stopped by their PID.
 *
 * Postgres refuses to run as root: a test run as root runs the servers as the `postgres` user.
 */

const BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';

interface PostgresServer {
  readonly port: number;
  /** A connection URL to `database` (default `postgres`) as the superuser `postgres`. */
  url(database?: string): string;
  /** The postmaster's process id while it runs, else undefined. */
  pid(): number | undefined;
  running(): boolean;
  /** Fast shutdown (SIGINT: sessions cut, no checkpoint wait); resolves once the postmaster has exited. */
  stop(): Promise<void>;
}

export interface PostgresCluster {
  primary: PostgresServer;
  standby: PostgresServer;
  /** Stops both servers (by PID) and deletes their directory. */
  close(): Promise<void>;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Starts a primary (`wal_level=replica`), takes a base backup of it and starts that as a hot standby. */
export async function startPrimaryWithStandby(): Promise<PostgresCluster> {
  if (!existsSync(join(BIN, 'initdb'))) {
    throw new Error(
      `The replica test starts a Postgres primary and standby of its own and needs the PostgreSQL server ` +
        `binaries (initdb, pg_basebackup, postgres) in ${BIN}: apt-get install postgresql-15, or set POSTGRES_BIN.`,
    );
  }
  const owner = serverUser();
  const root = mkdtempSync(join(tmpdir(), 'pg-cluster-'));
  if (owner) chownSync(root, owner.uid, owner.gid);
  const servers: PostgresServer[] = [];
  const close = async () => {
    for (const server of servers.reverse()) await server.stop();
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const primaryDir = join(root, 'primary');
    const primaryPort = await freePort();
    run(owner, 'initdb', ['-D', primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    // initdb's pg_hba.conf already lets local and 127.0.0.1 connections replicate with trust.
    configure(primaryDir, primaryPort, root, ['wal_level = replica', 'max_wal_senders = 4', 'fsync = off']);
    const primary = await startServer(owner, primaryDir, primaryPort);
    servers.push(primary);

    const standbyDir = join(root, 'standby');
    const standbyPort = await freePort();
    // -R writes primary_conninfo and standby.signal: the copy starts as a streaming standby.
    run(owner, 'pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      standbyDir,
      '-R',
      '-X',
      'stream',
      '--no-sync',
    ]);
    configure(standbyDir, standbyPort, root, ['hot_standby = on']);
    const standby = await startServer(owner, standbyDir, standbyPort);
    servers.push(standby);
    return { primary, standby, close };
  } catch (error) {
    await close();
    throw error;
  }
}

interface ServerUser {
  uid: number;
  gid: number;
}

function serverUser(): ServerUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

function run(owner: ServerUser | undefined, binary: string, args: string[]): void {
  execFileSync(join(BIN, binary), args, { stdio: 'pipe', ...owner });
}

/** Later lines of postgresql.conf win: the port and socket here override what a base backup copied. */
function configure(dir: string, port: number, socketDir: string, extra: string[]): void {
  const lines = [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${socketDir}'`,
    'shared_buffers = 16MB',
    'max_connections = 60',
    ...extra,
  ];
  appendFileSync(join(dir, 'postgresql.conf'), `\n${lines.join('\n')}\n`);
}

async function startServer(owner: ServerUser | undefined, dir: string, port: number): Promise<PostgresServer> {
  let output = '';
  const child = spawn(join(BIN, 'postgres'), ['-D', dir], { stdio: ['ignore', 'pipe', 'pipe'], ...owner });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  running.add(child);
  installExitHook();
  const exited = once(child, 'exit').then(() => running.delete(child));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const server: PostgresServer = {
    port,
    url,
    pid: () => (alive() ? child.pid : undefined),
    running: alive,
    async stop() {
      if (alive() && child.pid !== undefined) process.kill(child.pid, 'SIGINT');
      await exited;
    },
  };
  try {
    await eventually(
      async () => {
        if (!alive()) throw new Error(`postgres in ${dir} exited:\n${output}`);
        return (await answers(url())) ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: `postgres on port ${port}` },
    );
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A last resort if a test file dies before its afterAll: no server of ours outlives the run. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of running) {
      if (child.pid !== undefined && existsSync(`/proc/${child.pid}`)) {
        try {
          process.kill(child.pid, 'SIGQUIT');
        } catch {
          // already gone
        }
      }
    }
  });
}
