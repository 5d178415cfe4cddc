import { once } from 'node:events';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * An in-process TCP proxy in front of a real server (the shared Postgres), so that a test can take
 * the network away from the processes it started without touching the server other sessions use:
 * - `cut()` destroys every open connection, both sides (a crash or a failover as a client sees it);
 * - `refuse()` also stops listening, so new connections get ECONNREFUSED (the server is gone);
 * - `restore()` listens again on the same port.
 * Nothing is buffered or delayed: while it is up the proxy is a plain pipe.
 */
export interface TcpProxy {
  readonly port: number;
  /** Connections currently piped (client side). */
  openConnections(): number;
  /** Connections accepted since start. */
  acceptedConnections(): number;
  cut(): void;
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

  const handle = (client: Socket) => {
    accepted += 1;
    const upstream = createConnection({ host: target.host, port: target.port });
    const pair = { client, upstream };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    // Either side failing or closing takes the other down too, as a real broken link would.
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
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
