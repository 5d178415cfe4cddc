import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { MiddlewareHandler } from 'hono';
import type { App, AppEnv } from '../context.js';
import { dashboardAuth } from './dashboard-auth.middleware.js';

type BoardServerAdapter = Parameters<typeof createBullBoard>[0]['serverAdapter'];

const QUEUE_DASHBOARD_PATH = '/admin/queues';

/**
 * The BullMQ dashboard (bull-board) at /admin/queues, behind the admin token. The board is mounted
 * at once, but its queues are attached on the first request that finds Redis reached: the producer
 * only builds its Queue objects once the connection is ready, and until then the dashboard answers
 * 503 like any other use of the queue.
 */
export function registerQueueDashboard(app: App): void {
  const serverAdapter = new HonoAdapter(serveStatic).setBasePath(QUEUE_DASHBOARD_PATH);
  const board = createBullBoard({
    queues: [],
    // @bull-board/hono pins its own patch release of @bull-board/api, whose adapter types differ from
    // the installed one only by a private field; the runtime contract is the same.
    serverAdapter: serverAdapter as unknown as BoardServerAdapter,
    options: { uiConfig: { boardTitle: 'Rewards queues' } },
  });

  let attached = false;
  const attachQueues: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (!attached) {
      // Throws SERVICE_UNAVAILABLE while Redis has not been reached yet.
      const queues = Object.values(c.get('deps').producer.queues);
      board.setQueues(queues.map((queue) => new BullMQAdapter(queue)));
      attached = true;
    }
    await next();
  };

  for (const path of [QUEUE_DASHBOARD_PATH, `${QUEUE_DASHBOARD_PATH}/*`]) {
    app.use(path, dashboardAuth(), attachQueues);
  }
  app.route(QUEUE_DASHBOARD_PATH, serverAdapter.registerPlugin());
}
