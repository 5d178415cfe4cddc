import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay in front of Postgres that counts the statements one process sends: the frontend messages
 * `Q` (a simple query) and `E` (Execute, one per statement of the extended protocol, which node-postgres
 * uses for every parameterised query). Given to one service as its DATABASE_URL, it tells that service's
 * statements apart from every other client's, which pg_stat_database (per database) cannot. Plain TCP:
 * it answers an SSLRequest `N`, so the client goes on unencrypted (as it does locally anyway).
 */
export class PgStatementCounter {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  statements = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async listen(): Promise<number> {
    this.server = createServer((client) => this.relay(client));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return address.port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private relay(client: Socket): void {
    const upstream = createConnection(this.target);
    this.sockets.add(client).add(upstream);
    const closeBoth = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', closeBoth).on('close', closeBoth);
    upstream.on('error', closeBoth).on('close', closeBoth);
    upstream.pipe(client);
    let buffer = Buffer.alloc(0);
    let started = false;
    client.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!started) {
          // Untyped start-up messages: length (4 bytes, itself included) then the body.
          if (buffer.length < 8) break;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) break;
          const code = buffer.readInt32BE(4);
          if (length === 8 && code === 80877103) {
            // SSLRequest: answered here with "no", and not passed on.
            client.write('N');
            buffer = buffer.subarray(8);
            continue;
          }
          upstream.write(buffer.subarray(0, length));
          buffer = buffer.subarray(length);
          started = true;
          continue;
        }
        if (buffer.length < 5) break;
        const length = buffer.readInt32BE(1);
        if (buffer.length < length + 1) break;
        const type = String.fromCharCode(buffer[0] as number);
        if (type === 'Q' || type === 'E') this.statements += 1;
        upstream.write(buffer.subarray(0, length + 1));
        buffer = buffer.subarray(length + 1);
      }
    });
  }
}
