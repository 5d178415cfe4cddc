import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { App, AppEnv } from '../context.js';
import { recordAdminAction } from '../merchants/admin-audit.repository.js';
import { registerPortalAssets } from './portal-assets.js';
import { portalActor } from './portal-audit.js';
import { registerPortalJobRoutes } from './portal-jobs.routes.js';
import { consumePortalLink } from './portal-links.repository.js';
import { enteredPage, portalShell, refusalPage } from './portal-pages.js';
import { portalSecurityHeaders } from './portal-security-headers.js';
import { portalSession, portalSessionGate, sessionOfRequest, setPortalCookie } from './portal-session.middleware.js';
import { insertPortalSession } from './portal-sessions.repository.js';
import { csrfTokenOf, newPortalToken } from './portal-tokens.js';
import { registerPortalWebhookRoutes } from './portal-webhook.routes.js';

/** The addresses of the portal's views: each is the one page, which renders the view its address names. */
const VIEW_PATHS = ['/portal', '/portal/jobs/:jobId', '/portal/webhook'];

const TokenSchema = z.string().min(1).max(128);

/**
 * The merchant portal (docs/portal.md) on the merchants' listener: the page and its assets, the link
 * that opens a session, and the JSON API the page calls (/portal/api/*), behind the session cookie.
 */
export function registerPortal(app: App): void {
  app.use('/portal', portalSecurityHeaders());
  app.use('/portal/*', portalSecurityHeaders());
  const { base } = registerPortalAssets(app);

  app.get('/portal/enter', async (c) => {
    c.header('Cache-Control', 'no-store');
    const token = TokenSchema.safeParse(c.req.query('token'));
    const opened = token.success ? await openSession(c, token.data) : undefined;
    if (!opened) {
      return c.html(
        refusalPage(base, 'This link does not open the portal', 'It has expired, or it has been used already.'),
        403,
      );
    }
    setPortalCookie(c, opened.token, opened.expiresAt);
    return c.html(enteredPage(base), 200);
  });

  for (const path of VIEW_PATHS) {
    app.get(path, async (c) => {
      c.header('Cache-Control', 'no-store');
      if (!(await sessionOfRequest(c))) {
        return c.html(
          refusalPage(base, 'Your portal session has ended', 'It expired, was revoked, or was never opened here.'),
          401,
        );
      }
      return c.html(portalShell(base), 200);
    });
  }

  app.use('/portal/api/*', portalSessionGate(), async (c, next) => {
    await next();
    // Answers about one merchant's data: no shared cache keeps them.
    if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
  });
  app.get('/portal/api/session', (c) => {
    const session = portalSession(c);
    return c.json(
      {
        sessionId: session.id,
        merchant: { id: session.merchantId, name: session.merchantName },
        expiresAt: session.expiresAt.getTime(),
        csrfToken: csrfTokenOf(c.get('portalSessionToken') ?? ''),
      },
      200,
    );
  });
  registerPortalJobRoutes(app);
  registerPortalWebhookRoutes(app);
}

/** Uses the link and opens its session in one transaction: a link opens one session or none. */
async function openSession(
  c: Context<AppEnv>,
  linkToken: string,
): Promise<{ token: string; expiresAt: Date } | undefined> {
  const token = newPortalToken();
  const { db, config } = c.get('deps');
  return db.transaction().execute(async (trx) => {
    const link = await consumePortalLink(trx, linkToken);
    if (!link) return undefined;
    const session = await insertPortalSession(
      trx,
      { merchantId: link.merchantId, linkId: link.id, token },
      config.PORTAL_SESSION_LIFETIME_MS,
    );
    await recordAdminAction(trx, {
      operator: portalActor(session.id),
      action: 'portal.session.open',
      target: link.merchantId,
      after: { linkId: link.id, expiresAt: session.expiresAt.getTime() },
      requestId: c.get('requestId') ?? null,
    });
    return { token, expiresAt: session.expiresAt };
  });
}
