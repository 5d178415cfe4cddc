import type pg from 'pg';
import { round } from '../lib/percentiles.js';
import { pollUntil } from '../lib/progress.js';
import type { QueueKeys } from '../lib/queue-keys.js';
import type { TrafficMix } from './traffic-mix.js';

/** The queues whose jobs cancel rewards: empty once every accepted cancel has been applied. */
const CANCEL_QUEUES = ['cancel', 'bulk-cancel'];

/** After the traffic: waits until the cancel queues hold no job in any unfinished state. */
export async function waitForDrain(
  queue: QueueKeys,
  timeoutMs: number,
): Promise<{ ok: boolean; seconds: number; left: Record<string, number> }> {
  const began = performance.now();
  let left: Record<string, number> = {};
  const seconds = () => round((performance.now() - began) / 1000, 1);
  try {
    await pollUntil(
      async () => {
        left = {};
        for (const name of CANCEL_QUEUES) {
          const counts = await queue.jobCounts(name);
          for (const state of ['waiting', 'active', 'delayed', 'prioritized', 'paused', 'waiting-children']) {
            const count = counts[state] ?? 0;
            if (count > 0) left[`${name}.${state}`] = count;
          }
        }
        return Object.keys(left).length === 0 ? true : undefined;
      },
      { intervalMs: 500, timeoutMs, what: 'the cancel queues to drain' },
    );
    return { ok: true, seconds: seconds(), left };
  } catch {
    return { ok: false, seconds: seconds(), left };
  }
}

/** Rewards a 200 promised to cancel that are not CANCELLED: by id, then by (merchant, player). */
export async function countNotCancelled(pool: pg.Pool, traffic: TrafficMix): Promise<number> {
  let missing = 0;
  const chunk = 10_000;
  for (let start = 0; start < traffic.acceptedRewardIds.length; start += chunk) {
    const { rows } = await pool.query<{ count: string }>(
      "SELECT count(*) AS count FROM rewards WHERE id = ANY($1::uuid[]) AND status <> 'CANCELLED'",
      [traffic.acceptedRewardIds.slice(start, start + chunk)],
    );
    missing += Number(rows[0]?.count ?? 0);
  }
  for (let start = 0; start < traffic.acceptedPlayers.length; start += chunk) {
    const players = traffic.acceptedPlayers.slice(start, start + chunk);
    const { rows } = await pool.query<{ count: string }>(
      `SELECT count(*) AS count FROM rewards r
       JOIN unnest($1::uuid[], $2::text[]) AS p(merchant_id, player_id)
         ON r.merchant_id = p.merchant_id AND r.player_id = p.player_id
       WHERE r.status <> 'CANCELLED'`,
      [players.map((p) => p.merchantId), players.map((p) => p.playerId)],
    );
    missing += Number(rows[0]?.count ?? 0);
  }
  return missing;
}
