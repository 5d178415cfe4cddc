import { loadConfigOrExit } from '../shared/config.js';
import { createLogger } from '../shared/logger.js';
import { closeRedis } from '../shared/queue/redis.js';
import { installShutdown } from '../shared/shutdown.js';
import { createApiConnections, createApiDeps } from './api-deps.js';
import { createApp } from './app.js';
import { closeGracefully } from './graceful-close.js';
import { serveApi } from './http-server.js';

const config = loadConfigOrExit();
const logger = createLogger({ level: config.LOG_LEVEL, name: 'api' });
const connections = createApiConnections(config, logger);
const deps = createApiDeps(config, logger, connections);

const app = createApp(deps);
const server = serveApi(app, config, (address) => {
  logger.info({ port: address.port }, 'api listening');
});

installShutdown({
  logger,
  timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  // Stop accepting, let in-flight requests finish, then close what they used, in that order.
  steps: [
    ['http server', () => closeGracefully(server)],
    ['queues', () => deps.producer.close()],
    ['redis', () => closeRedis(connections.redis)],
    ['database', () => connections.db.destroy()],
  ],
});
