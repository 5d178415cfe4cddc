import { createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { CallStackContextManager } from '../../src/shared/telemetry/call-stack-context-manager.js';

const KEY = createContextKey('test key');
const withValue = (value: string) => ROOT_CONTEXT.setValue(KEY, value);

describe('CallStackContextManager: the active context lasts for the synchronous extent of `with`', () => {
  it('is the root outside any `with`, the given context inside, the outer one again after', () => {
    const manager = new CallStackContextManager();
    expect(manager.active()).toBe(ROOT_CONTEXT);
    const seen = manager.with(withValue('outer'), () => {
      const inner = manager.with(withValue('inner'), () => manager.active().getValue(KEY));
      return [inner, manager.active().getValue(KEY)];
    });
    expect(seen).toEqual(['inner', 'outer']);
    expect(manager.active()).toBe(ROOT_CONTEXT);
  });

  it('restores the outer context when the function throws, and passes this and the arguments', () => {
    const manager = new CallStackContextManager();
    expect(() =>
      manager.with(withValue('failing'), () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(manager.active()).toBe(ROOT_CONTEXT);
    const receiver = { factor: 3 };
    const product = manager.with(
      withValue('args'),
      function (this: typeof receiver, a: number, b: number) {
        return this.factor * a * b;
      },
      receiver,
      2,
      5,
    );
    expect(product).toBe(30);
  });

  it('does not carry the context past an await (no async hooks): that is its point', async () => {
    const manager = new CallStackContextManager();
    const after = await manager.with(withValue('before the await'), async () => {
      const before = manager.active().getValue(KEY);
      await Promise.resolve();
      return [before, manager.active().getValue(KEY)];
    });
    expect(after).toEqual(['before the await', undefined]);
  });

  it('binds a function to a context for whenever it is called, and leaves other values as they are', () => {
    const manager = new CallStackContextManager();
    const bound = manager.bind(withValue('bound'), (suffix: string) => `${manager.active().getValue(KEY)}${suffix}`);
    expect(bound('!')).toBe('bound!');
    expect(manager.active()).toBe(ROOT_CONTEXT);
    const emitter = { on: () => {} };
    expect(manager.bind(withValue('bound'), emitter)).toBe(emitter);
  });

  it('disable drops back to the root context', () => {
    const manager = new CallStackContextManager().enable();
    manager.with(withValue('kept'), () => {
      manager.disable();
      expect(manager.active()).toBe(ROOT_CONTEXT);
    });
  });
});
