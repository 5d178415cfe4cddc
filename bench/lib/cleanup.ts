/**
 * Runs the cleanup once, whatever ends the run: the normal end, an error, Ctrl-C (SIGINT) or SIGTERM.
 * A second signal while cleaning up gives up on the graceful path: children are killed at once and
 * the process exits. When the process exits by any other road, still-running children are killed.
 */
export interface CleanupHandle {
  run(): Promise<void>;
  /** True once cleanup has begun: the run must not start anything new. */
  readonly started: boolean;
}

export function installCleanup(
  cleanup: () => Promise<void>,
  killChildrenNow: () => void,
  log: (message: string) => void,
): CleanupHandle {
  let running: Promise<void> | null = null;
  const run = () => {
    running ??= cleanup().catch((error: unknown) => log(`cleanup failed: ${(error as Error).message}`));
    return running;
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (running) {
      log(`${signal} again: killing the services and exiting without finishing the cleanup`);
      killChildrenNow();
      process.exit(130);
    }
    log(`${signal}: stopping the services, dropping the benchmark databases and queue keys`);
    void run().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', killChildrenNow);
  return {
    run,
    get started() {
      return running !== null;
    },
  };
}
