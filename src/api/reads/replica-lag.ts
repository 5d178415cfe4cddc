/** A Postgres WAL position (`pg_lsn`, written `X/Y` in hex) as a number that compares. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/');
  if (high === undefined || low === undefined) throw new Error(`not a WAL position: ${text}`);
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/**
 * How long ago the primary had written WAL that the replica has not replayed yet.
 *
 * Not `now() - pg_last_xact_replay_timestamp()`: on an idle primary nothing is replayed, so that
 * timestamp ages while the replica is fully caught up, and an idle service would look as lagging as
 * a broken one. Instead the primary's WAL position is sampled on every check, each position kept with
 * the time it was first seen; the replica is behind by the age of the oldest position it has not
 * replayed, and not behind at all once it has replayed the newest. The answer is a lower bound, short
 * by at most one check interval.
 */
export class ReplicaLag {
  /** Positions the primary was seen at, each with when it was first seen; ascending. */
  private readonly samples: { at: number; lsn: bigint }[] = [];

  /** @param keepMs how long a sample is kept: a lag past it reads as at least this long. */
  constructor(private readonly keepMs: number) {}

  /** The primary's current WAL position (`pg_current_wal_lsn()`), read at `at`. */
  recordPrimary(lsn: bigint, at: number): void {
    const last = this.samples.at(-1);
    // An idle primary stays at one position: its first sighting is what dates it.
    if (last === undefined || lsn > last.lsn) this.samples.push({ at, lsn });
    // Keep at least one sample, so that a replica behind it always shows a lag.
    while (this.samples.length > 1 && (this.samples[0] as { at: number }).at < at - this.keepMs) this.samples.shift();
  }

  /**
   * The replica's lag at `now` in milliseconds, given the position it has replayed up to
   * (`pg_last_wal_replay_lsn()`, read after the primary's last sample); undefined before any sample.
   */
  lagMs(replayed: bigint, now: number): number | undefined {
    if (this.samples.length === 0) return undefined;
    const oldestNotReplayed = this.samples.find((sample) => sample.lsn > replayed);
    return oldestNotReplayed === undefined ? 0 : Math.max(0, now - oldestNotReplayed.at);
  }
}
