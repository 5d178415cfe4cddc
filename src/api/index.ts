import { loadConfigOrExit } from '../shared/config/config.js';
import { installShutdown } from '../shared/process/shutdown.js';
import { closeRedis } from '../shared/redis/redis.js';
import { createLogger } from '../shared/telemetry/logger.js';
import { flushTraces } from '../shared/telemetry/trace-context.js';
import { createApiConnections, createApiDeps } from './api-deps.js';
import { createAdminApp, createApp } from './app.js';
import { closeGracefully } from './http/graceful-close.js';
import { serveApi } from './http-server.js';

const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'api' });
const connections = createApiConnections(config, logger);
const deps = createApiDeps(config, logger, connections);

const server = serveApi(createApp(deps), config, (address) => {
  logger.info({ port: address.port }, 'api listening');
});
// The admin plane on a port of its own, which the merchants' network need not reach.
const adminServer = serveApi(createAdminApp(deps), { ...config, PORT: config.ADMIN_PORT }, (address) => {
  logger.info({ port: address.port }, 'admin listening');
});

installShutdown({
  logger,
  timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  // Stop accepting, let in-flight requests finish, then close what they used, in that order.
  steps: [
    // An event stream never ends by itself: ended first, so the servers can drain.
    ['job event streams', () => deps.jobEvents.close()],
    [
      'http servers',
      async () => {
        await Promise.all([closeGracefully(server), closeGracefully(adminServer)]);
      },
    ],
    // The access lines of the last requests, before the process ends.
    ['access log', () => deps.accessLog.flush()],
    ['queues', () => deps.producer.close()],
    ['read router', () => deps.reads.close()],
    [
      'redis',
      async () => {
        await Promise.all([closeRedis(connections.redis), closeRedis(connections.requestRedis)]);
      },
    ],
    ['database', () => connections.db.destroy()],
    ['read replica', async () => connections.replica?.destroy()],
    ['traces', () => flushTraces()],
  ],
});
