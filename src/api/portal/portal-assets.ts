import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { App } from '../context.js';
import { IMMUTABLE_CACHE_CONTROL } from '../http/immutable-cache-control.js';

/**
 * The portal page's script modules and style sheet: plain files in ./assets (copied next to the built
 * code by `npm run build`), served as they are, no build step. They are read once, and served under a
 * path that carries a digest of them all (`/portal/assets/<digest>/portal.js`): a change gives new
 * paths, so browsers may keep each for a year, and the modules' relative imports stay in one version.
 */

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

interface Asset {
  type: string;
  plain: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer>;
}

export interface PortalAssets {
  /** `/portal/assets/<digest>`: the folder the page links to. */
  base: string;
}

export function registerPortalAssets(app: App): PortalAssets {
  const folder = new URL('./assets/', import.meta.url);
  const assets = new Map<string, Asset>();
  const digest = createHash('sha256');
  for (const name of readdirSync(folder).sort()) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const plain = readFileSync(new URL(name, folder));
    digest.update(name).update(plain);
    assets.set(name, { type, plain: new Uint8Array(plain), gzip: new Uint8Array(gzipSync(plain)) });
  }
  const base = `/portal/assets/${digest.digest('hex').slice(0, 16)}`;

  app.get(`${base}/:name`, (c) => {
    const asset = assets.get(c.req.param('name'));
    if (!asset) return c.notFound();
    const gzip = /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
    c.header('Content-Type', asset.type);
    c.header('Cache-Control', IMMUTABLE_CACHE_CONTROL);
    c.header('Vary', 'Accept-Encoding');
    if (gzip) c.header('Content-Encoding', 'gzip');
    return c.body(gzip ? asset.gzip : asset.plain, 200);
  });
  return { base };
}
