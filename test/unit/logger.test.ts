import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/shared/telemetry/logger.js';
import { captureLogLines } from '../helpers/log-lines.js';

describe('createLogger', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('stamps each line with the ISO time of its own millisecond', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { lines, stream } = captureLogLines();
    const logger = createLogger({ level: 'info', name: 'test' }, stream);

    vi.setSystemTime(new Date('2026-11-22T10:00:00.123Z'));
    logger.info('first');
    logger.info('same millisecond');
    vi.setSystemTime(new Date('2026-11-22T10:00:00.124Z'));
    logger.info('next millisecond');
    vi.setSystemTime(new Date('2026-11-22T10:00:01.000Z'));
    logger.info('a second later');

    expect(lines.map((line) => [line.msg, line.time])).toEqual([
      ['first', '2026-11-22T10:00:00.123Z'],
      ['same millisecond', '2026-11-22T10:00:00.123Z'],
      ['next millisecond', '2026-11-22T10:00:00.124Z'],
      ['a second later', '2026-11-22T10:00:01.000Z'],
    ]);
    expect(lines[0]).toMatchObject({ level: 30, service: 'test' });
  });

  it('keeps a separate clock per logger', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const first = captureLogLines();
    const second = captureLogLines();
    const a = createLogger({ level: 'info', name: 'a' }, first.stream);
    const b = createLogger({ level: 'info', name: 'b' }, second.stream);
    vi.setSystemTime(new Date('2026-11-22T10:00:00.001Z'));
    a.info('a');
    vi.setSystemTime(new Date('2026-11-22T10:00:00.002Z'));
    b.info('b');
    a.info('a again');
    expect(first.lines.map((line) => line.time)).toEqual(['2026-11-22T10:00:00.001Z', '2026-11-22T10:00:00.002Z']);
    expect(second.lines.map((line) => line.time)).toEqual(['2026-11-22T10:00:00.002Z']);
  });
});
