import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Config } from '../shared/config/config.js';
import type { App } from './context.js';

/** Where the server listens, and how long a client may take to send a request. */
export type ApiServerSettings = Pick<Config, 'PORT' | 'HOST' | 'HTTP_REQUEST_TIMEOUT_MS' | 'HTTP_HEADERS_TIMEOUT_MS'>;

/** How often Node looks for requests past their timeout, at most: Node's own default is 30 s. */
const MAX_TIMEOUT_CHECK_MS = 1_000;
/** The shortest time between two of those checks, whatever the timeouts: each walks every open connection. */
const MIN_TIMEOUT_CHECK_MS = 50;

/**
 * The API's Node HTTP server. A client gets HTTP_HEADERS_TIMEOUT_MS to send its headers and
 * HTTP_REQUEST_TIMEOUT_MS for the whole request (30 s each by default, Node's are 60 s and 300 s); past
 * either, Node answers 408 and closes the connection. So a slow upload holds its buffered body and its
 * socket for 30 s at most. Only receiving is timed: a request fully received may take as long as its
 * handler needs.
 *
 * Node checks the timeouts every `connectionsCheckingInterval` (30 s by default, which would let a
 * request live up to twice its timeout): here every second, or every half timeout when that is shorter.
 */
export function serveApi(app: App, settings: ApiServerSettings, onListening?: (address: AddressInfo) => void): Server {
  const shortest = Math.min(settings.HTTP_REQUEST_TIMEOUT_MS, settings.HTTP_HEADERS_TIMEOUT_MS);
  return serve(
    {
      fetch: app.fetch,
      port: settings.PORT,
      hostname: settings.HOST,
      serverOptions: {
        requestTimeout: settings.HTTP_REQUEST_TIMEOUT_MS,
        headersTimeout: settings.HTTP_HEADERS_TIMEOUT_MS,
        connectionsCheckingInterval: Math.max(
          MIN_TIMEOUT_CHECK_MS,
          Math.min(MAX_TIMEOUT_CHECK_MS, Math.floor(shortest / 2)),
        ),
      },
    },
    onListening,
  ) as Server;
}
