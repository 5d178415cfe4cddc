import type { Server } from 'node:http';

/**
 * How often connections left idle are closed while the server drains: a keep-alive connection is closed
 * within this long of its last answer, well inside the shutdown deadline, at the cost of a cheap sweep.
 */
const IDLE_SWEEP_MS = 50;

/**
 * Closes the HTTP server for a graceful shutdown: no new connections; a request already being read is
 * answered, with `Connection: close` so that its client sends no other on that connection; connections
 * that go idle are closed. `server.close()` alone closes only the connections idle at that instant: a
 * client sending request after request on a keep-alive connection would hold the server open until the
 * shutdown deadline, and the process would exit as timed out.
 */
export function closeGracefully(server: Server): Promise<void> {
  server.prependListener('request', (_request, response) => {
    if (!response.headersSent) response.setHeader('Connection', 'close');
  });
  return new Promise<void>((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
  });
}
