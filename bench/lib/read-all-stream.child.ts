import { Agent, request as httpRequest } from 'node:http';
import { READ_ALL_PATH } from './api-paths.js';
import { signedBody } from './merchant-client.js';
import { sleep } from './progress.js';
import type { ReadAllStream, StreamCommand, StreamRequest, StreamSample } from './read-all-stream.js';

/**
 * The readAll streams' own process (opened by `ReadAllStreams`): told to start a stream, it answers once
 * it is sending; told to stop, it sends back what the stream saw. It does nothing else, so what it
 * measures is the gateway and the machine, not the bench.
 *
 * The stream: `connections` loops, each sending one request every `connections / requestsPerSecond`
 * seconds (or at once when the previous answer came late). Latency is measured from just before the
 * request to its whole body, in microsecond resolution.
 */
function run(request: StreamRequest): ReadAllStream {
  const samples: StreamSample[] = [];
  let errors = 0;
  let firstError: string | null = null;
  let running = true;
  const intervalMs = (request.connections * 1000) / request.requestsPerSecond;
  const url = new URL(READ_ALL_PATH, request.baseUrl);
  // One kept-alive connection per loop, as a platform polling readAll would hold.
  const agent = new Agent({ keepAlive: true, maxSockets: request.connections });

  const recordError = (message: string) => {
    errors += 1;
    firstError ??= message;
  };

  const loop = async (index: number) => {
    let next = performance.now() + (index * intervalMs) / request.connections;
    while (running) {
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
      if (!running) break;
      next += intervalMs;
      const started = performance.now();
      try {
        const response = await post(agent, url, JSON.stringify(signedBody(request.merchant)));
        const elapsed = performance.now() - started;
        if (response.status === 200) samples.push({ sentAt: performance.timeOrigin + started, ms: elapsed });
        else recordError(`readAll answered ${response.status}: ${response.text.slice(0, 200)}`);
      } catch (error) {
        recordError(`readAll failed: ${(error as Error).message}`);
      }
      next = Math.max(next, performance.now());
    }
  };

  const loops = Array.from({ length: request.connections }, (_, index) => loop(index));
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      agent.destroy();
      return { samples, errors, firstError };
    },
  };
}

/**
 * One POST and its whole answer, through node:http: the lightest client Node has (fetch costs several
 * times its CPU per request), so that the stream takes as little as possible of the machine it measures.
 */
function post(agent: Agent, url: URL, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
        response.on('error', reject);
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

let running: ReadAllStream | null = null;
process.on('message', async (command: StreamCommand) => {
  if (command === 'stop') {
    const record = (await running?.stop()) ?? { samples: [], errors: 0, firstError: 'no stream was running' };
    running = null;
    process.send?.(record);
    return;
  }
  // A stream left running (its run failed before stopping it) ends first: one stream at a time.
  await running?.stop();
  running = run(command.start);
  process.send?.('started');
});
// The parent gone (the bench closed the streams, or stopped), the process ends.
process.once('disconnect', () => process.exit(0));
