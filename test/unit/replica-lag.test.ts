import { describe, expect, it } from 'vitest';
import { parseLsn, ReplicaLag } from '../../src/api/reads/replica-lag.js';

describe('parseLsn', () => {
  it('reads both halves of X/Y as hex, so positions compare across the 4 GiB boundary', () => {
    expect(parseLsn('0/16B3748')).toBe(0x16b3748n);
    expect(parseLsn('1/0')).toBe(0x100000000n);
    expect(parseLsn('1/0') > parseLsn('0/FFFFFFFF')).toBe(true);
  });

  it('refuses text that is not a WAL position', () => {
    expect(() => parseLsn('16B3748')).toThrow(/not a WAL position/);
  });
});

describe('ReplicaLag', () => {
  it('is undefined before the primary has been sampled', () => {
    expect(new ReplicaLag(60_000).lagMs(10n, 1_000)).toBeUndefined();
  });

  it('is 0 on an idle primary the replica has caught up with, however long it stays idle', () => {
    const lag = new ReplicaLag(60_000);
    for (let at = 0; at <= 600_000; at += 100) lag.recordPrimary(500n, at);
    expect(lag.lagMs(500n, 600_000)).toBe(0);
  });

  it('is the age of the oldest position the replica has not replayed', () => {
    const lag = new ReplicaLag(60_000);
    lag.recordPrimary(100n, 1_000);
    lag.recordPrimary(200n, 1_100);
    lag.recordPrimary(300n, 1_200);
    expect(lag.lagMs(100n, 1_300)).toBe(200);
    expect(lag.lagMs(250n, 1_300)).toBe(100);
    expect(lag.lagMs(300n, 1_300)).toBe(0);
  });

  it('dates an idle position by its first sighting, so a replica stuck behind it keeps lagging', () => {
    const lag = new ReplicaLag(60_000);
    lag.recordPrimary(100n, 0);
    for (let at = 100; at <= 5_000; at += 100) lag.recordPrimary(200n, at);
    expect(lag.lagMs(100n, 5_000)).toBe(4_900);
  });

  it('keeps samples for its window only, and always the last one', () => {
    const lag = new ReplicaLag(1_000);
    lag.recordPrimary(100n, 0);
    lag.recordPrimary(200n, 500);
    lag.recordPrimary(300n, 5_000);
    // Positions 100 and 200 have aged out: a replica behind them reads as behind the oldest kept.
    expect(lag.lagMs(50n, 5_500)).toBe(500);
    expect(lag.lagMs(300n, 60_000)).toBe(0);
  });
});
