import { Redis } from 'ioredis';
import { freePort } from './processes.js';
import { type RedisServer, startRedisServer } from './redis-server.js';
import { eventually } from './worker.js';

/**
 * A real Redis Cluster of masters (no replicas) made of our own redis-server processes, formed with
 * plain cluster commands (as `redis-cli --cluster create` does: slots, config epochs, MEET), and a
 * reshard of one slot done the way `redis-cli --cluster reshard` does it (IMPORTING / MIGRATING,
 * MIGRATE the keys, SETSLOT NODE everywhere), so a test can move a queue's slot while traffic runs.
 */

interface ClusterNode {
  server: RedisServer;
  id: string;
  port: number;
  /** A plain (non-cluster) connection to this node, for administration and inspection. */
  admin: Redis;
}

export interface RedisCluster {
  nodes: ClusterNode[];
  /** `host:port,host:port,...`: the seed list the processes get in REDIS_CLUSTER_NODES. */
  seedList: string;
  /** The hash slot of a key (asks the server, so it is Redis's own CRC16). */
  slotOf(key: string): Promise<number>;
  /** The master serving a slot, as the given node (default: the first) sees it. */
  ownerOf(slot: number, asSeenBy?: ClusterNode): Promise<ClusterNode>;
  /** Keys in a slot on a node. */
  keysInSlot(node: ClusterNode, slot: number): Promise<number>;
  /** Moves a slot, keys and all, to `target` while the cluster serves traffic. */
  moveSlot(slot: number, target: ClusterNode, options?: MoveSlotOptions): Promise<MoveSlotReport>;
  stop(): Promise<void>;
}

interface MoveSlotOptions {
  /** Keys per MIGRATE call (default 20). */
  keysPerBatch?: number;
  /** Pause between MIGRATE calls, so traffic meets a slot that is half moved (default 0). */
  pauseMs?: number;
}

interface MoveSlotReport {
  from: number;
  to: number;
  keysMoved: number;
  ms: number;
}

const SLOTS = 16_384;

export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const nodes: ClusterNode[] = [];
  const busPorts: number[] = [];
  const stop = async () => {
    for (const node of nodes) node.admin.disconnect();
    await Promise.all(nodes.map((node) => node.server.stop()));
  };
  try {
    for (let i = 0; i < masters; i++) {
      // The cluster bus gets a free port of its own rather than port + 10000, which may be taken.
      const busPort = await freePort();
      busPorts.push(busPort);
      const server = await startRedisServer({
        args: [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-port',
          String(busPort),
          '--cluster-node-timeout',
          '5000',
          '--appendonly',
          'no',
        ],
      });
      const admin = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true, maxRetriesPerRequest: 1 });
      admin.on('error', () => {});
      await admin.connect();
      const id = (await admin.call('CLUSTER', 'MYID')) as string;
      nodes.push({ server, id, port: server.port, admin });
      // An even split of the slots, and a distinct config epoch per node (no epoch collision to settle).
      const first = Math.floor((SLOTS * i) / masters);
      const last = Math.floor((SLOTS * (i + 1)) / masters) - 1;
      await admin.call('CLUSTER', 'ADDSLOTSRANGE', first, last);
      await admin.call('CLUSTER', 'SET-CONFIG-EPOCH', i + 1);
    }
    const [head, ...rest] = nodes;
    if (!head) throw new Error('a cluster needs at least one master');
    for (const [index, node] of rest.entries()) {
      await head.admin.call('CLUSTER', 'MEET', '127.0.0.1', node.port, busPorts[index + 1] as number);
    }
    await eventually(
      async () => {
        for (const node of nodes) {
          const info = (await node.admin.call('CLUSTER', 'INFO')) as string;
          if (!info.includes('cluster_state:ok') || !info.includes(`cluster_known_nodes:${masters}`)) return undefined;
        }
        return true;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'the cluster to form' },
    );
  } catch (error) {
    await stop();
    throw error;
  }

  const ownerOf = async (slot: number, asSeenBy: ClusterNode = nodes[0] as ClusterNode): Promise<ClusterNode> => {
    const ranges = (await asSeenBy.admin.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number, string]]>;
    const range = ranges.find(([start, end]) => start <= slot && slot <= end);
    const owner = nodes.find((node) => node.id === range?.[2]?.[2]);
    if (!owner) throw new Error(`no master serves slot ${slot}`);
    return owner;
  };

  return {
    nodes,
    seedList: nodes.map((node) => `127.0.0.1:${node.port}`).join(','),
    slotOf: async (key) => Number(await (nodes[0] as ClusterNode).admin.call('CLUSTER', 'KEYSLOT', key)),
    ownerOf,
    keysInSlot: async (node, slot) => Number(await node.admin.call('CLUSTER', 'COUNTKEYSINSLOT', slot)),
    async moveSlot(slot, target, options = {}) {
      const began = Date.now();
      const source = await ownerOf(slot);
      if (source === target) throw new Error(`slot ${slot} is already on ${target.port}`);
      const keysPerBatch = options.keysPerBatch ?? 20;
      await target.admin.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.id);
      await source.admin.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.id);
      let keysMoved = 0;
      for (;;) {
        const keys = (await source.admin.call('CLUSTER', 'GETKEYSINSLOT', slot, keysPerBatch)) as string[];
        if (keys.length === 0) break;
        // No REPLACE: a key created on the target meanwhile (through ASK) is newer than the source's.
        await source.admin.call('MIGRATE', '127.0.0.1', target.port, '', 0, 10_000, 'KEYS', ...keys);
        keysMoved += keys.length;
        if (options.pauseMs) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
      }
      // The target first, so that the slot is never served by nobody; then everyone else.
      await target.admin.call('CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
      await source.admin.call('CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
      for (const node of nodes) {
        if (node !== target && node !== source) await node.admin.call('CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
      }
      return { from: source.port, to: target.port, keysMoved, ms: Date.now() - began };
    },
    stop,
  };
}
