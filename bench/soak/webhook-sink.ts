import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningService } from '../lib/processes.js';
import type { SoakMerchant } from './soak-data.js';

export interface WebhookArrival {
  /** Epoch ms of the arrival. */
  arrivedAt: number;
  /** From the job's finishedAt (in the event body) to the arrival, in ms. */
  delayMs: number;
}

/**
 * The merchants' webhook receivers, one local HTTP server for all (`<url>/m/<merchantId>`): the dead
 * merchant's path answers 500 to everything; the others answer 200 and record, once per event
 * (`webhook-id`), how long after its job finished the event arrived. Only figures are kept, not bodies:
 * a long soak receives hundreds of thousands.
 */
export class WebhookSink {
  readonly arrivals = new Map<string, WebhookArrival[]>();
  /** Distinct events per healthy merchant (retries of one event counted once). */
  private readonly seen = new Map<string, Set<string>>();
  /** Attempts answered 500, per dead merchant. */
  readonly refused = new Map<string, number>();
  private readonly server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const merchantId = /^\/m\/([^/?]+)/.exec(request.url ?? '')?.[1] ?? '';
      if (this.dead.has(merchantId)) {
        this.refused.set(merchantId, (this.refused.get(merchantId) ?? 0) + 1);
        response.writeHead(500, { 'content-type': 'text/plain' }).end('receiver down');
        return;
      }
      this.record(merchantId, String(request.headers['webhook-id'] ?? ''), Buffer.concat(chunks).toString());
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  private base = '';

  constructor(private readonly dead: ReadonlySet<string>) {}

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  urlFor(merchantId: string): string {
    return `${this.base}/m/${merchantId}`;
  }

  /** Distinct events a healthy merchant received. */
  eventsOf(merchantId: string): number {
    return this.seen.get(merchantId)?.size ?? 0;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private record(merchantId: string, eventId: string, body: string): void {
    let events = this.seen.get(merchantId);
    if (!events) {
      events = new Set();
      this.seen.set(merchantId, events);
    }
    if (events.has(eventId)) return;
    events.add(eventId);
    const arrivedAt = Date.now();
    let finishedAt: number | null = null;
    try {
      const parsed = JSON.parse(body) as { data?: { finishedAt?: unknown } };
      finishedAt = typeof parsed.data?.finishedAt === 'number' ? parsed.data.finishedAt : null;
    } catch {
      // A body that is not JSON has no finish time: counted as an event, no delay.
    }
    if (finishedAt === null) return;
    let list = this.arrivals.get(merchantId);
    if (!list) {
      list = [];
      this.arrivals.set(merchantId, list);
    }
    list.push({ arrivedAt, delayMs: arrivedAt - finishedAt });
  }
}

/** The admin API sets each merchant's webhook to its path on the local receiver. */
export async function registerWebhooks(
  api: RunningService,
  adminToken: string,
  merchants: readonly SoakMerchant[],
  sink: WebhookSink,
): Promise<void> {
  for (const merchant of merchants) {
    const response = await fetch(`${api.adminUrl}/admin/v1/merchants/${merchant.id}/webhook`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify({ url: sink.urlFor(merchant.id) }),
    });
    const text = await response.text();
    if (response.status !== 200)
      throw new Error(`setting ${merchant.id}'s webhook answered ${response.status}: ${text.slice(0, 300)}`);
  }
}
