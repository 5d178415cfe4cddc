import type { AddressInfo } from 'node:net';
import { createApiDeps } from '../../src/api/api-deps.js';
import { createApp } from '../../src/api/app.js';
import type { ApiDeps, App } from '../../src/api/context.js';
import { serveApi } from '../../src/api/http-server.js';
import { createLogger } from '../../src/shared/logger.js';
import { Metrics } from '../../src/shared/metrics.js';
import { createRedis } from '../../src/shared/queue/redis.js';
import type { TestEnvironment } from './environment.js';

export interface TestApi {
  app: App;
  deps: ApiDeps;
  baseUrl: string;
  /** POST a JSON body (an object is serialised; a string is sent as is). */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  close(): Promise<void>;
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
}

export async function startTestApi(
  env: TestEnvironment,
  depsOverrides: Partial<ApiDeps> = {},
  options: TestApiOptions = {},
): Promise<TestApi> {
  const { config } = env;
  const redis = createRedis(options.redisUrl ?? config, 'producer', 'rewards-api-test');
  if (options.waitForRedis !== false) {
    await new Promise<void>((resolve, reject) => {
      redis.once('ready', () => resolve());
      setTimeout(() => reject(new Error('redis did not become ready')), 5_000).unref();
    });
  }
  const logger = createLogger({ level: config.LOG_LEVEL, name: 'api-test' });
  const metrics = new Metrics({ collectDefaults: false, processName: 'api' });
  const deps: ApiDeps = { ...createApiDeps(config, logger, { db: env.db, redis }, metrics), ...depsOverrides };
  const app = createApp(deps);
  // The production server (its timeouts included), on an ephemeral port.
  const server = serveApi(app, { ...deps.config, PORT: 0, HOST: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    app,
    deps,
    baseUrl,
    post: (path, body, headers = {}) =>
      fetch(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    get: (path, headers = {}) => fetch(`${baseUrl}${path}`, { headers }),
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await deps.producer.close();
      redis.disconnect();
    },
  };
}
