import type { Logger } from '../telemetry/logger.js';

export type ShutdownStep = readonly [name: string, run: () => Promise<void>];

/**
 * Graceful on the first SIGTERM/SIGINT: the steps run in order (stop taking work, finish what is in
 * flight, close queues, Redis, the database). A second signal, or `timeoutMs` passing, forces the
 * exit so an orchestrator's grace period is never overrun.
 */
export function installShutdown(options: { logger: Logger; timeoutMs: number; steps: readonly ShutdownStep[] }): void {
  const { logger, timeoutMs, steps } = options;
  let shuttingDown = false;

  const shutdown = async (signal: string) => {
    if (shuttingDown) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    shuttingDown = true;
    logger.info({ signal, timeoutMs }, 'shutting down');
    const forced = setTimeout(() => {
      logger.error({ timeoutMs }, 'shutdown timed out: exiting');
      process.exit(1);
    }, timeoutMs);
    forced.unref();
    let failed = false;
    for (const [name, run] of steps) {
      try {
        await run();
        logger.info({ step: name }, 'closed');
      } catch (error) {
        failed = true;
        logger.error({ err: error, step: name }, 'shutdown step failed');
      }
    }
    logger.info('shutdown complete');
    logger.flush?.();
    process.exit(failed ? 1 : 0);
  };

  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
