import { Agent, createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { closeGracefully } from '../../src/api/http/graceful-close.js';

/**
 * A client that sends request after request on one keep-alive connection must not hold a closing
 * server open: `server.close()` alone closes only the connections idle at that instant.
 */
describe('closeGracefully', () => {
  it('lets a busy keep-alive client go after the request in flight', async () => {
    const server = createServer((_request, response) => {
      setTimeout(() => response.end('ok'), 2);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let served = 0;
    let servedAfterClose = 0;
    let closing = false;
    // Stops by itself only after 2,000 requests: without the drain, close() would wait for all of them.
    const client = new Promise<void>((resolve) => {
      const next = () => {
        if (served >= 2_000) return resolve();
        get({ port, host: '127.0.0.1', agent }, (response) => {
          response.resume();
          response.on('end', () => {
            served += 1;
            if (closing) servedAfterClose += 1;
            next();
          });
        }).on('error', () => resolve());
      };
      next();
    });
    while (served < 20) await new Promise((resolve) => setTimeout(resolve, 5));

    closing = true;
    await closeGracefully(server);
    await client;
    agent.destroy();

    expect(served).toBeLessThan(2_000);
    expect(servedAfterClose).toBeLessThanOrEqual(2);
  });
});
