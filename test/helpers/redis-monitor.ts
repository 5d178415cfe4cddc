import { createConnection, type Socket } from 'node:net';

/**
 * Redis MONITOR over a plain socket: every command the server runs (also inside scripts), as
 * `[command, ...args]`. Plain, because ioredis's own monitor mode can mistake a monitor line for the
 * reply to its connection handshake when the server is busy with other clients.
 */
export interface RedisMonitor {
  commands: string[][];
  stop(): void;
}

export async function monitorRedis(redisUrl: string): Promise<RedisMonitor> {
  const url = new URL(redisUrl);
  const socket: Socket = createConnection({ host: url.hostname, port: Number(url.port || 6379) });
  const commands: string[][] = [];
  let buffer = '';
  let started: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    started = resolve;
  });
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let end = buffer.indexOf('\r\n');
    while (end >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (line === '+OK') started();
      else if (line.startsWith('+')) commands.push(parseMonitorLine(line));
      end = buffer.indexOf('\r\n');
    }
  });
  socket.on('error', () => {});
  socket.write('MONITOR\r\n');
  await ready;
  return { commands, stop: () => socket.destroy() };
}

/** `+1700000000.123 [0 127.0.0.1:5000] "HMGET" "key" "field"` → ['HMGET', 'key', 'field']. */
function parseMonitorLine(line: string): string[] {
  const tokens: string[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"/g;
  for (let match = pattern.exec(line); match; match = pattern.exec(line)) tokens.push(match[1] as string);
  return tokens;
}
