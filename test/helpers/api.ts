import type { AddressInfo } from 'node:net';
import { createApiDeps, createReadRouter } from '../../src/api/api-deps.js';
import { createAdminApp, createApp } from '../../src/api/app.js';
import type { ApiDeps, App } from '../../src/api/context.js';
import { serveApi } from '../../src/api/http-server.js';
import type { Db } from '../../src/shared/db/client.js';
import { createRedis } from '../../src/shared/redis/redis.js';
import { createLogger } from '../../src/shared/telemetry/logger.js';
import { Metrics } from '../../src/shared/telemetry/metrics.js';
import type { TestEnvironment } from './environment.js';

export interface TestApi {
  app: App;
  /** The admin listener's application (admin API, dashboard, /metrics). */
  adminApp: App;
  deps: ApiDeps;
  /** The merchants' listener. */
  baseUrl: string;
  /** The admin listener. */
  adminUrl: string;
  /**
   * POST a JSON body (an object is serialised; a string is sent as is). Admin-plane paths (isAdminPath)
   * go to the admin listener, everything else to the merchants'; `merchantListener` sends any path there.
   */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
}

/** The paths that live on the admin listener only: the admin API, the queue dashboard, /metrics. */
function isAdminPath(path: string): boolean {
  return path === '/metrics' || path.startsWith('/metrics?') || path === '/admin' || path.startsWith('/admin/');
}

/**
 * The real application on a real HTTP server (an ephemeral port on 127.0.0.1), wired to the test
 * file's own database and queue prefix. Requests go over the socket, so the peer address, body
 * limits and headers behave as in production.
 */
export interface TestApiOptions {
  /** The Redis the API's producer uses; default: the environment's. */
  redisUrl?: string;
  /** Wait for that Redis to be ready before serving (default true); false for a Redis that is meant to be down. */
  waitForRedis?: boolean;
  /** A pool the API takes as its read replica (DATABASE_READ_URL); the test closes it. */
  replica?: Db;
}

export async function startTestApi(
  env: TestEnvironment,
  depsOverrides: Partial<ApiDeps> = {},
  options: TestApiOptions = {},
): Promise<TestApi> {
  const { config } = env;
  const redis = createRedis(options.redisUrl ?? config, 'producer', 'rewards-api-test');
  const requestRedis = createRedis(options.redisUrl ?? config, 'producer', 'rewards-api-test-requests', {
    autoPipelining: true,
  });
  if (options.waitForRedis !== false) {
    await Promise.all(
      [redis, requestRedis].map(
        (connection) =>
          new Promise<void>((resolve, reject) => {
            connection.once('ready', () => resolve());
            setTimeout(() => reject(new Error('redis did not become ready')), 5_000).unref();
          }),
      ),
    );
  }
  // A test's own logger or metrics are the ones every part uses, the access log included.
  const logger = depsOverrides.logger ?? createLogger({ level: config.LOG_LEVEL, name: 'api-test' });
  const metrics = depsOverrides.metrics ?? new Metrics({ collectDefaults: false, processName: 'api' });
  const built = createApiDeps(config, logger, { db: env.db, redis, requestRedis, replica: options.replica }, metrics);
  // A test that swaps the database swaps it for the routes' reads too: they go through the read router.
  const reads =
    depsOverrides.db && !depsOverrides.reads
      ? createReadRouter(config, logger, metrics, depsOverrides.db, options.replica)
      : built.reads;
  const deps: ApiDeps = { ...built, reads, ...depsOverrides };
  const app = createApp(deps);
  const adminApp = createAdminApp(deps);
  // The production servers (their timeouts included), on ephemeral ports.
  const server = serveApi(app, { ...deps.config, PORT: 0, HOST: '127.0.0.1' });
  const adminServer = serveApi(adminApp, { ...deps.config, PORT: 0, HOST: '127.0.0.1' });
  await Promise.all(
    [server, adminServer].map(
      (listening) => new Promise<void>((resolve) => listening.once('listening', () => resolve())),
    ),
  );
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const adminUrl = `http://127.0.0.1:${(adminServer.address() as AddressInfo).port}`;
  const urlOf = (path: string) => `${isAdminPath(path) ? adminUrl : baseUrl}${path}`;

  return {
    app,
    adminApp,
    deps,
    baseUrl,
    adminUrl,
    post: (path, body, headers = {}) =>
      fetch(urlOf(path), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    get: (path, headers = {}) => fetch(urlOf(path), { headers }),
    async close() {
      await deps.jobEvents.close();
      await Promise.all(
        [server, adminServer].map((open) => new Promise<void>((resolve) => open.close(() => resolve()))),
      );
      await deps.producer.close();
      await Promise.all([built.reads.close(), deps.reads.close()]);
      redis.disconnect();
      requestRedis.disconnect();
    },
  };
}
