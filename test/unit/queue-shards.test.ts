import { describe, expect, it } from 'vitest';
import { batchIdOf, memberJobId, newBatchId } from '../../src/shared/cancellations/member-ids.js';
import { loadConfig } from '../../src/shared/config/config.js';
import { queueShardPrefix } from '../../src/shared/redis/redis-keys.js';
import { jobShard, parseShardList, ShardLayout, shardJobId } from '../../src/shared/redis/shards.js';
import { isUuid } from '../../src/shared/wire-rules.js';

const base = { DATABASE_URL: 'postgres://localhost/x', REDIS_URL: 'redis://localhost' };

describe('queue shard prefixes', () => {
  it('put the shard number inside the hash tag; one shard (null) is the prefix itself', () => {
    expect(queueShardPrefix('{rewards}', null)).toBe('{rewards}');
    expect(queueShardPrefix('{rewards}', 3)).toBe('{rewards-3}');
    expect(queueShardPrefix('app:{rewards}:q', 15)).toBe('app:{rewards-15}:q');
    expect(queueShardPrefix('bull', 2)).toBe('{bull-2}');
    expect(queueShardPrefix('x{}y', 2)).toBe('{x{}y-2}');
  });
});

describe('a merchant’s shard', () => {
  const layout = new ShardLayout({ QUEUE_PREFIX: '{rewards}', QUEUE_SHARDS: 16 });

  it('is FNV-1a of the lower-cased id modulo the count: stable, whatever the case', () => {
    // FNV-1a (32 bits) test vectors: "a" is 0xe40c292c, "foobar" is 0xbf9cf968; their last byte is the
    // shard among 256 (and its last hex digit among 16).
    const wide = new ShardLayout({ QUEUE_PREFIX: '{rewards}', QUEUE_SHARDS: 256 });
    expect(wide.merchantShard('a')).toBe(0x2c);
    expect(wide.merchantShard('foobar')).toBe(0x68);
    expect(layout.merchantShard('FOOBAR')).toBe(0x8);
    const id = '00000000-0000-4000-8000-000000000001';
    expect(layout.merchantShard(id)).toBe(layout.merchantShard(id.toUpperCase()));
    expect(layout.merchantPrefix(id)).toBe(`{rewards-${layout.merchantShard(id)}}`);
    const spread = new Set(Array.from({ length: 200 }, (_, i) => layout.merchantShard(`m-${i}`)));
    expect(spread.size).toBe(16);
  });

  it('is no shard at all with QUEUE_SHARDS=1: every key keeps QUEUE_PREFIX', () => {
    const one = new ShardLayout({ QUEUE_PREFIX: '{rewards}', QUEUE_SHARDS: 1 });
    expect(one.merchantShard('any')).toBeNull();
    expect(one.merchantPrefix('any')).toBe('{rewards}');
    expect(one.allShards()).toEqual([null]);
    expect(jobShard(one.newJobId('any'))).toBeNull();
  });

  it('has a previous prefix only while the count changes and only when it differs', () => {
    const moving = new ShardLayout({ QUEUE_PREFIX: '{rewards}', QUEUE_SHARDS: 16, QUEUE_SHARDS_PREVIOUS: 1 });
    expect(moving.previousMerchantPrefix('m-1')).toBe('{rewards}');
    expect(moving.allShards()).toHaveLength(17);
    expect(layout.previousMerchantPrefix('m-1')).toBeUndefined();
  });
});

describe('job ids', () => {
  it('name their shard (a UUIDv8) and stay UUIDs; v4 ids are the unsharded layout', () => {
    for (const shard of [0, 7, 15, 255]) {
      const id = shardJobId(shard);
      expect(isUuid(id)).toBe(true);
      expect(jobShard(id)).toBe(shard);
      expect(jobShard(`${id}.part-3`)).toBe(shard);
    }
    expect(jobShard(shardJobId(null))).toBeNull();
    expect(jobShard('3fa85f64-5717-4562-b3fc-2c963f66afa6')).toBeNull();
  });

  it('of a batch and its members carry the batch’s shard, and a member finds its batch', () => {
    const batch = newBatchId(9);
    const member = memberJobId(batch, 4);
    expect(jobShard(batch)).toBe(9);
    expect(jobShard(member)).toBe(9);
    expect(batchIdOf(member)).toBe(batch);
    expect(isUuid(member)).toBe(true);
  });

  it('lead a job to its keys whatever the merchant’s shard is now', () => {
    const layout = new ShardLayout({ QUEUE_PREFIX: '{rewards}', QUEUE_SHARDS: 4 });
    expect(layout.jobPrefix(shardJobId(12))).toBe('{rewards-12}');
    expect(layout.jobPrefix(shardJobId(null))).toBe('{rewards}');
  });
});

describe('WORKER_SHARDS', () => {
  it('takes numbers and ranges, and the worker consumes those shards only', () => {
    expect(parseShardList('0-3, 8,10-11', 16)).toEqual([0, 1, 2, 3, 8, 10, 11]);
    const config = loadConfig({ ...base, QUEUE_SHARDS: '16', WORKER_SHARDS: '2-3' });
    expect(new ShardLayout(config).consumedShards()).toEqual([2, 3]);
  });

  it('refuses what is not a list of shards of the current count', () => {
    expect(parseShardList('a', 16)).toMatch(/not a shard number/);
    expect(parseShardList('5-2', 16)).toMatch(/ends before it starts/);
    expect(() => loadConfig({ ...base, QUEUE_SHARDS: '4', WORKER_SHARDS: '3-5' })).toThrow(/WORKER_SHARDS: .*0 to 3/);
    expect(() => loadConfig({ ...base, QUEUE_SHARDS: '300' })).toThrow(/QUEUE_SHARDS/);
    expect(loadConfig(base).QUEUE_SHARDS).toBe(1);
  });
});
