import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { App } from '../context.js';
import { IMMUTABLE_CACHE_CONTROL } from '../http/immutable-cache-control.js';

const TITLE = 'Merchant rewards gateway API';

/**
 * The API reference page (Scalar) over the OpenAPI document. It must work without internet access
 * (a closed network, an operator's laptop offline), so nothing comes from a CDN: the script is
 * Scalar's self-contained browser bundle from the installed @scalar/api-reference, served by this
 * route under `<docsPath>/assets/`, and Scalar's default web fonts are left out (system fonts).
 */
export function registerReferencePage(app: App, docsPath: string, documentPath: string): void {
  const bundle = locateBundle();
  // The version in the URL changes whenever the package is upgraded, so browsers may keep the
  // script for good.
  const scriptPath = `${docsPath}/assets/standalone.js`;
  const page = referenceHtml(`${scriptPath}?v=${bundle.version}`, {
    url: documentPath,
    withDefaultFonts: false,
    // Scalar's hosted extras (AI chat, MCP generator, deploy/share toolbar, usage telemetry) talk to
    // scalar.com: they cannot work offline and are no part of this API.
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never',
    telemetry: false,
  });

  app.get(docsPath, (c) => c.html(page));

  let script: { plain: Uint8Array<ArrayBuffer>; gzip: Uint8Array<ArrayBuffer> } | undefined;
  app.get(scriptPath, (c) => {
    // 4 MB, about 1 MB gzipped: read and compressed on the first request only, not at start-up.
    if (!script) {
      const plain = readFileSync(bundle.path);
      script = { plain: new Uint8Array(plain), gzip: new Uint8Array(gzipSync(plain)) };
    }
    const gzip = /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
    c.header('Content-Type', 'text/javascript; charset=utf-8');
    c.header('Cache-Control', IMMUTABLE_CACHE_CONTROL);
    c.header('Vary', 'Accept-Encoding');
    if (gzip) c.header('Content-Encoding', 'gzip');
    return c.body(gzip ? script.gzip : script.plain, 200);
  });
}

function locateBundle(): { version: string; path: string } {
  // The package exports no package.json; its entry point is dist/index.js, the bundle dist/browser/.
  const dist = dirname(createRequire(import.meta.url).resolve('@scalar/api-reference'));
  const { version } = JSON.parse(readFileSync(join(dist, '..', 'package.json'), 'utf8')) as { version: string };
  return { version, path: join(dist, 'browser', 'standalone.js') };
}

function referenceHtml(scriptSrc: string, configuration: Record<string, unknown>): string {
  // `<` escaped so that no value can close the inline script.
  const config = JSON.stringify(configuration).replaceAll('<', '\\u003c');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${TITLE}</title>
  </head>
  <body>
    <div id="app"></div>
    <script src="${scriptSrc}"></script>
    <script>Scalar.createApiReference('#app', ${config});</script>
  </body>
</html>
`;
}
