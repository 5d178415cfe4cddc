import net from 'node:net';
import type { LoadFigures } from './http-load.js';
import { loadAverage1m } from './machine.js';
import { percentile, round } from './percentiles.js';

/**
 * Sends a fixed list of POST requests, each once, over `connections` kept-alive HTTP/1.1 connections
 * (one request in flight on each), and answers when every one is answered.
 *
 * Why not autocannon here: the single-cancel runs send 20,000 distinct bodies, and autocannon builds
 * each request anew (`setupRequest`) in the bench's own event loop (~35 µs of CPU per request, measured
 * 2026-11-23), which on a 2-core machine is taken from the API, worker and Postgres the run times (in production the
 * clients are other machines). Here every request is encoded once before the clock starts and the
 * answers are only split and counted: a few µs each. Both sides of the single-cancel ratio use it.
 *
 * Deliberately small: answers must carry Content-Length (the API's do; chunked answers count as
 * errors), and a connection the server closes with a request in flight counts that request as an
 * error and carries on with a new connection.
 */
export function sendRequests(
  baseUrl: string,
  path: string,
  bodies: readonly string[],
  options: { connections: number; timeoutMs: number },
): Promise<LoadFigures> {
  const url = new URL(baseUrl);
  const port = Number(url.port || 80);
  const head = `POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\n`;
  const requests = bodies.map((body) =>
    Buffer.from(`${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, 'latin1'),
  );
  const latencies = new Float64Array(requests.length);
  const statusCodes: Record<string, number> = {};
  let next = 0;
  let answered = 0;
  let errors = 0;
  let started = 0;

  return new Promise<LoadFigures>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${answered} of ${requests.length} requests answered after ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    const finishOne = () => {
      answered += 1;
      if (answered < requests.length) return;
      clearTimeout(timer);
      const seconds = (performance.now() - started) / 1000;
      const good = Object.entries(statusCodes).reduce(
        (sum, [code, count]) => sum + (code.startsWith('2') ? count : 0),
        0,
      );
      const non2xx = answered - good - errors;
      const sample = Array.from(latencies);
      resolve({
        requests: answered,
        rps: round(good / seconds, 0),
        p50Ms: round(percentile(sample, 50) ?? 0, 2),
        p99Ms: round(percentile(sample, 99) ?? 0, 2),
        errors: errors + non2xx,
        non2xx,
        statusCodes,
        durationSeconds: round(seconds, 3),
        loadAverage1m: loadAverage1m(),
      });
    };

    const open = () => {
      if (next >= requests.length) return;
      const socket = net.connect({ host: url.hostname, port, noDelay: true });
      let pending: Buffer = Buffer.alloc(0);
      let inFlight = -1;
      let sentAt = 0;
      const send = () => {
        if (next >= requests.length) {
          inFlight = -1;
          socket.end();
          return;
        }
        inFlight = next++;
        sentAt = performance.now();
        socket.write(requests[inFlight] as Buffer);
      };
      socket.on('connect', send);
      socket.on('data', (chunk: Buffer) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        for (;;) {
          const headEnd = pending.indexOf('\r\n\r\n');
          if (headEnd < 0) return;
          const responseHead = pending.toString('latin1', 0, headEnd);
          const length = /\r\ncontent-length: *(\d+)/i.exec(responseHead);
          if (!length) {
            socket.destroy(); // counted as an error when it closes
            return;
          }
          const total = headEnd + 4 + Number(length[1]);
          if (pending.length < total) return;
          pending = pending.subarray(total);
          const status = responseHead.slice(9, 12);
          statusCodes[status] = (statusCodes[status] ?? 0) + 1;
          latencies[inFlight] = performance.now() - sentAt;
          inFlight = -1;
          finishOne();
          send();
        }
      });
      socket.on('error', () => {}); // followed by 'close'
      socket.on('close', () => {
        if (inFlight < 0) return;
        inFlight = -1;
        errors += 1;
        finishOne();
        open();
      });
    };

    started = performance.now();
    for (let index = 0; index < Math.min(options.connections, requests.length); index++) open();
  });
}
