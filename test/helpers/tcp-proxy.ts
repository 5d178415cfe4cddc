import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * An in-process TCP proxy in front of a real server (the shared Postgres), so that a test can take
 * the network away from the processes it started without touching the server other sessions use:
 * - `cut()` destroys every open connection, both sides (a crash or a failover as a client sees it);
 * - `refuse()` also stops listening, so new connections get ECONNREFUSED (the server is gone);
 * - `restore()` listens again on the same port;
 * - `holdFrom(marker)` stalls a connection from the first chunk a client sends that contains `marker`
 *   (a command carrying a test's value): that chunk and everything the client sends after it wait in
 *   the proxy, unsent, until `release()` sends them on or `cut()` drops them (a command lost in a
 *   broken link). Only the chosen command and what follows it are stalled, nothing before it.
 * Otherwise nothing is buffered or delayed: the proxy is a plain pipe.
 */
export interface TcpProxy {
  readonly port: number;
  /** Connections currently piped (client side). */
  openConnections(): number;
  /** Connections accepted since start. */
  acceptedConnections(): number;
  cut(): void;
  /** Stalls each connection from its first client chunk that contains `marker` (until release or cut). */
  holdFrom(marker: string): void;
  /** Connections stalled now. */
  heldConnections(): number;
  /** Sends what stalled connections held on, and pipes them again; stops holding. */
  release(): void;
  refuse(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let accepted = 0;
  let listening = false;
  let server: Server | undefined;
  let port = 0;
  let holdMarker: Buffer | undefined;
  const held = new Map<Socket, Buffer[]>();

  const handle = (client: Socket) => {
    accepted += 1;
    const upstream = createConnection({ host: target.host, port: target.port });
    const pair = { client, upstream };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      held.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    // Either side failing or closing takes the other down too, as a real broken link would.
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    client.on('data', (chunk: Buffer) => {
      const waiting = held.get(upstream);
      if (waiting) {
        waiting.push(chunk);
        return;
      }
      if (holdMarker && chunk.includes(holdMarker)) {
        held.set(upstream, [chunk]);
        return;
      }
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
    });
    upstream.pipe(client);
  };

  const listen = async () => {
    server = createServer(handle);
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('proxy has no address');
    port = address.port;
    listening = true;
  };

  const stopListening = async () => {
    if (!server || !listening) return;
    listening = false;
    const closing = server;
    server = undefined;
    // close() waits for open connections; cut() (called before) has destroyed them.
    await new Promise<void>((resolve) => closing.close(() => resolve()));
  };

  const cut = () => {
    for (const { client, upstream } of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
  };

  await listen();

  return {
    get port() {
      return port;
    },
    openConnections: () => pairs.size,
    acceptedConnections: () => accepted,
    cut,
    holdFrom(marker) {
      holdMarker = Buffer.from(marker);
    },
    heldConnections: () => held.size,
    release() {
      holdMarker = undefined;
      for (const [upstream, chunks] of held) for (const chunk of chunks) upstream.write(chunk);
      held.clear();
    },
    async refuse() {
      cut();
      await stopListening();
    },
    async restore() {
      if (!listening) await listen();
    },
    async close() {
      cut();
      await stopListening();
    },
  };
}

/** The same connection URL, sent through the proxy instead (same database, user and options). */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(proxy.port);
  return parsed.toString();
}

/** Host and port a postgres:// URL points at. */
export function serverOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname || '127.0.0.1', port: Number(parsed.port || 5432) };
}
