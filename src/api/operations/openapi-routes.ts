import type { App } from '../context.js';
import { buildAdminDocument, buildMerchantDocument, type OpenApiDocument } from './openapi-documents.js';
import { registerReferencePage } from './reference-page.js';

const OPENAPI_PATH = '/openapi.json';
const DOCS_PATH = '/docs';

/**
 * Serves a document built once, on first request, and a reference page over it: the same JSON
 * `npm run openapi` writes to openapi/ (a test holds the three equal). Plain (not `openapi`) routes, so
 * that they stay out of the documents.
 */
function serveDocument(app: App, build: () => OpenApiDocument): void {
  let document: OpenApiDocument | undefined;
  app.get(OPENAPI_PATH, (c) => {
    document ??= build();
    return c.json(document);
  });
  registerReferencePage(app, DOCS_PATH, OPENAPI_PATH);
}

/** The merchant document (openapi/merchant.json), on the merchants' listener. */
export function registerMerchantDocs(app: App): void {
  serveDocument(app, buildMerchantDocument);
}

/** The admin document (openapi/admin.json), on the admin listener. */
export function registerAdminDocs(app: App): void {
  serveDocument(app, buildAdminDocument);
}
