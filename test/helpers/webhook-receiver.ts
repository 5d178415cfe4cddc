import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as received (what a signature covers). */
  body: string;
}

/** What the receiver does with a request: answer with a status, or leave it hanging. */
type Answer = number | 'hang';

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /**
   * Decides the answer to each request (after it is recorded); default 200. May be async, to act
   * (call the admin API, say) before answering.
   */
  answer: (request: ReceivedWebhook, index: number) => Answer | Promise<Answer>;
  /** The requests whose `webhook-id` header is `id`. */
  withId(id: string): ReceivedWebhook[];
  /** Requests to `path` received and not answered yet (hanging, or awaiting their answer). */
  open(path: string): number;
  /** The most requests to `path` that were open at once. */
  peakOpen(path: string): number;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1, as a merchant's endpoint would be, recording what it receives. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const hanging = new Set<ServerResponse>();
  const openByPath = new Map<string, number>();
  const peakByPath = new Map<string, number>();
  const receiver: WebhookReceiver = {
    url: '',
    port: 0,
    received: [],
    answer: () => 200,
    withId: (id) => receiver.received.filter((request) => request.headers['webhook-id'] === id),
    open: (path) => openByPath.get(path) ?? 0,
    peakOpen: (path) => peakByPath.get(path) ?? 0,
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const received = { path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString() };
      const index = receiver.received.push(received) - 1;
      const path = received.path;
      const open = (openByPath.get(path) ?? 0) + 1;
      openByPath.set(path, open);
      peakByPath.set(path, Math.max(peakByPath.get(path) ?? 0, open));
      // A request stops being open when its connection closes: answered, or given up by the sender.
      response.on('close', () => openByPath.set(path, (openByPath.get(path) ?? 1) - 1));
      const answer = await receiver.answer(received, index);
      if (answer === 'hang') {
        hanging.add(response);
        return;
      }
      response.writeHead(answer, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}
