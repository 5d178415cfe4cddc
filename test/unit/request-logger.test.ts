import { describe, expect, it } from 'vitest';
import { RequestLogger } from '../../src/api/http/request-logger.js';
import { createLogger } from '../../src/shared/telemetry/logger.js';
import { captureLogLines } from '../helpers/log-lines.js';

/** pino's destination is written to asynchronously: wait for the lines to arrive. */
async function linesOf(written: { lines: Record<string, unknown>[] }, count: number) {
  for (let tries = 0; written.lines.length < count && tries < 100; tries += 1) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  return written.lines;
}

describe('RequestLogger', () => {
  it('writes the bindings of every `with` on its lines, in the order they were added', async () => {
    const written = captureLogLines();
    const base = createLogger({ level: 'info', name: 'test' }, written.stream);
    const request = new RequestLogger(base, { requestId: 'req-1' });
    const traced = request.with({ trace_id: 't'.repeat(32), span_id: 's'.repeat(16) });
    const authenticated = traced.with({ merchantId: 'merchant-1' });

    authenticated.info({ jobId: 'job-1' }, 'identical waiting request: job shared');
    request.warn({}, 'before authentication');

    const [first, second] = await linesOf(written, 2);
    expect(first).toMatchObject({
      requestId: 'req-1',
      trace_id: 't'.repeat(32),
      span_id: 's'.repeat(16),
      merchantId: 'merchant-1',
      jobId: 'job-1',
      msg: 'identical waiting request: job shared',
    });
    // A log that was extended keeps only its own bindings.
    expect(second).toMatchObject({ requestId: 'req-1', msg: 'before authentication' });
    expect(second).not.toHaveProperty('merchantId');
    expect(second).not.toHaveProperty('trace_id');
  });

  it('lets a later binding of the same name win', async () => {
    const written = captureLogLines();
    const base = createLogger({ level: 'info', name: 'test' }, written.stream);
    const log = new RequestLogger(base, { requestId: 'req-1', merchantId: 'unknown' }).with({
      merchantId: 'merchant-2',
    });

    log.error({}, 'failed');

    const [line] = await linesOf(written, 1);
    expect(line).toMatchObject({ requestId: 'req-1', merchantId: 'merchant-2', msg: 'failed' });
  });
});
