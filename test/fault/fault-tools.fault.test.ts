import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type RedisCluster, startRedisCluster } from '../helpers/redis-cluster.js';
import { type RedisServer, startRedisServer } from '../helpers/redis-server.js';
import { serverOf, startTcpProxy, type TcpProxy, throughProxy } from '../helpers/tcp-proxy.js';
import { useTestContext } from '../helpers/test-context.js';

/**
 * The fault tests are only as good as their faults: these prove that the proxy really drops and
 * refuses connections, that a killed Redis really restarts from its append-only file, and that the
 * Cluster really forms and really moves a slot with its keys.
 */

const { env } = useTestContext();
let proxy: TcpProxy | undefined;
let redis: RedisServer | undefined;
let cluster: RedisCluster | undefined;

afterAll(async () => {
  await proxy?.close();
  await redis?.stop();
  await cluster?.stop();
});

async function connectThrough(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  await client.connect();
  return client;
}

describe('TCP proxy in front of Postgres', () => {
  it('cuts open connections (idle and mid-query), refuses new ones, and restores', async () => {
    proxy = await startTcpProxy(serverOf(env.databaseUrl));
    const url = throughProxy(env.databaseUrl, proxy);

    const idle = await connectThrough(url);
    const idleError = new Promise<Error>((resolve) => idle.once('error', resolve));
    const busy = await connectThrough(url);
    busy.on('error', () => {});
    expect((await idle.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    expect(proxy.openConnections()).toBe(2);

    const longQuery = busy.query('SELECT pg_sleep(30)').then(
      () => 'finished',
      (error: Error) => error.message,
    );
    const cutAt = Date.now();
    proxy.cut();
    expect(await longQuery).toMatch(/terminated|ECONNRESET|closed/i);
    expect(Date.now() - cutAt).toBeLessThan(2_000);
    expect((await idleError).message).toMatch(/terminated|ECONNRESET|closed/i);
    expect(proxy.openConnections()).toBe(0);

    await proxy.refuse();
    const refused = await connectThrough(url).then(
      (client) => client.end().then(() => 'connected'),
      (error: NodeJS.ErrnoException) => error.code ?? error.message,
    );
    expect(refused).toBe('ECONNREFUSED');

    await proxy.restore();
    const again = await connectThrough(url);
    expect((await again.query('SELECT current_database() AS db')).rows[0].db).toBe(
      new URL(env.databaseUrl).pathname.slice(1),
    );
    await again.end();
  });
});

describe('a redis-server of our own', () => {
  it('comes back after kill -9 with what its append-only file holds', async () => {
    // fsync on every write here, so that the check does not depend on the one-second window.
    redis = await startRedisServer({ args: ['--appendonly', 'yes', '--appendfsync', 'always'] });
    const client = new Redis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    client.on('error', () => {});
    await client.connect();
    await client.set('{fault-tools}:kept', 'yes');
    client.disconnect();
    const firstPid = redis.pid();

    await redis.kill();
    expect(redis.running()).toBe(false);
    const refused = new Redis(redis.url, { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    refused.on('error', () => {});
    await expect(refused.connect()).rejects.toThrow();
    refused.disconnect();

    await redis.restart();
    expect(redis.pid()).not.toBe(firstPid);
    const after = new Redis(redis.url, { lazyConnect: true });
    after.on('error', () => {});
    await after.connect();
    expect(await after.get('{fault-tools}:kept')).toBe('yes');
    after.disconnect();
  });
});

describe('a Redis Cluster of three masters', () => {
  it('forms, serves a hash-tagged key from its slot, and moves that slot with its keys', async () => {
    cluster = await startRedisCluster(3);
    expect(cluster.nodes).toHaveLength(3);
    for (const node of cluster.nodes) {
      expect(await node.admin.call('CLUSTER', 'INFO')).toContain('cluster_state:ok');
    }

    const client = new Cluster(
      cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port })),
      { redisOptions: { maxRetriesPerRequest: 3 } },
    );
    client.on('error', () => {});
    const keys = Array.from({ length: 50 }, (_, i) => `{fault-tools}:key-${i}`);
    for (const key of keys) await client.set(key, key);
    const slot = await cluster.slotOf('{fault-tools}:key-0');
    expect(await cluster.slotOf('{fault-tools}:other')).toBe(slot);
    const source = await cluster.ownerOf(slot);
    expect(await cluster.keysInSlot(source, slot)).toBe(50);

    const target = cluster.nodes.find((node) => node !== source);
    if (!target) throw new Error('no other master');
    const report = await cluster.moveSlot(slot, target, { keysPerBatch: 7 });
    expect(report).toMatchObject({ from: source.port, to: target.port, keysMoved: 50 });

    for (const node of cluster.nodes) expect((await cluster.ownerOf(slot, node)).port).toBe(target.port);
    expect(await cluster.keysInSlot(source, slot)).toBe(0);
    expect(await cluster.keysInSlot(target, slot)).toBe(50);
    // A client that still believes the old owner follows MOVED to the new one.
    expect(await client.get('{fault-tools}:key-49')).toBe('{fault-tools}:key-49');
    client.disconnect();
  });
});
