import { afterAll, beforeAll } from 'vitest';
import type { ApiDeps } from '../../src/api/context.js';
import { startTestApi, type TestApi, type TestApiOptions } from './api.js';
import { createTestEnvironment, type TestEnvironment } from './environment.js';
import { startTestWorker, type TestWorker } from './worker.js';

export interface TestContextOptions {
  /** Settings this file runs with, over the test defaults (createTestEnvironment). */
  settings?: Record<string, string>;
  /** The real API on a real socket: `true`, or the overrides and options of startTestApi. */
  api?: boolean | { deps?: Partial<ApiDeps>; options?: TestApiOptions };
  /** The real worker in this process. */
  worker?: boolean;
}

export interface TestContext {
  /** The file's own database and queue prefix, and the configuration pointed at them. */
  readonly env: TestEnvironment;
  readonly api: TestApi;
  readonly worker: TestWorker;
}

/**
 * The setup every server test file needs, asked for in one line: its own database and queue prefix
 * (createTestEnvironment), and the API and the worker it names, started before the file's tests
 * (beforeAll, before the file's own hooks) and closed after them (afterAll, after the file's own, in
 * reverse order of starting).
 *
 * The parts are returned at once but exist only once the file's hooks run, so each is a stand-in that
 * reaches the real one when used: `const { env, api } = useTestContext({ api: true })` at the top of a
 * file, then `env.db` and `api.post(...)` in hooks and tests. Reading one outside a hook or a test, or
 * one the file did not ask for, fails with a message saying so.
 */
export function useTestContext(options: TestContextOptions = {}): TestContext {
  const parts: { env?: TestEnvironment; api?: TestApi; worker?: TestWorker } = {};

  beforeAll(async () => {
    parts.env = await createTestEnvironment(options.settings);
    if (options.api) {
      const { deps, options: apiOptions } = options.api === true ? {} : options.api;
      parts.api = await startTestApi(parts.env, deps, apiOptions);
    }
    if (options.worker) parts.worker = await startTestWorker(parts.env);
  });
  afterAll(async () => {
    await parts.worker?.close();
    await parts.api?.close();
    await parts.env?.close();
  });

  return {
    env: standIn('env', () => parts.env),
    api: standIn('api', () => parts.api),
    worker: standIn('worker', () => parts.worker),
  };
}

/** An object that forwards every read to `current()`, once the context has made it. */
function standIn<T extends object>(name: string, current: () => T | undefined): T {
  const real = (): T => {
    const value = current();
    if (value === undefined) {
      throw new Error(
        `the test context's ${name} is not there: ask for it in useTestContext, and use it inside a hook or a test`,
      );
    }
    return value;
  };
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(real(), key),
    has: (_, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
      // A proxy may only report an own property as configurable when its target has it too.
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}
