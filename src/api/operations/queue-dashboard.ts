import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { MiddlewareHandler } from 'hono';
import { AppError } from '../../shared/errors/errors.js';
import type { App, AppEnv } from '../context.js';
import { auditAdminWrite } from '../merchants/admin-audit.js';
import { dashboardAuth, isSafeMethod } from './dashboard-auth.middleware.js';

/**
 * Every write through the dashboard (retry, promote, clean, add, remove a job; pause a queue) changes
 * what merchants' jobs do, so: none unless DASHBOARD_WRITE=true, and then each recorded in the audit
 * log, with its operator, before it is made. Refused here rather than left to bull-board's read-only
 * mode alone, which guards the routes it knows of, queue by queue.
 */
function dashboardWrites(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (isSafeMethod(c.req.method)) return next();
    if (!c.get('deps').config.DASHBOARD_WRITE) {
      throw new AppError('FORBIDDEN', 'The queue dashboard is read-only (DASHBOARD_WRITE)', {
        logDetail: `dashboard: ${c.req.method} ${c.req.path} refused, read-only`,
      });
    }
    await auditAdminWrite(c, c.get('deps').db, {
      action: 'dashboard.write',
      target: `${c.req.method} ${c.req.path.slice(QUEUE_DASHBOARD_PATH.length)}`,
    });
    await next();
  };
}

type BoardServerAdapter = Parameters<typeof createBullBoard>[0]['serverAdapter'];

const QUEUE_DASHBOARD_PATH = '/admin/queues';

/**
 * The BullMQ dashboard (bull-board) at /admin/queues on the admin listener, behind the operators' tokens,
 * read-only unless DASHBOARD_WRITE=true. The board is mounted
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
      // Each shard's queues under the shard's name (`shard-3:cancel`); unsharded queues under their own.
      const queues = c.get('deps').producer.queues.listed();
      // Read-only queues: bull-board hides its buttons and answers 405 to its own write routes.
      const readOnlyMode = !c.get('deps').config.DASHBOARD_WRITE;
      board.setQueues(
        queues.map(
          ({ queue, shard }) =>
            new BullMQAdapter(queue, shard === '' ? { readOnlyMode } : { readOnlyMode, prefix: `shard-${shard}:` }),
        ),
      );
      attached = true;
    }
    await next();
  };

  for (const path of [QUEUE_DASHBOARD_PATH, `${QUEUE_DASHBOARD_PATH}/*`]) {
    app.use(path, dashboardAuth(), dashboardWrites(), attachQueues);
  }
  app.route(QUEUE_DASHBOARD_PATH, serverAdapter.registerPlugin());
}
