import { createRoute, z } from '@hono/zod-openapi';
import { publicBaseUrl } from '../../shared/config/config.js';
import { AppError } from '../../shared/errors/errors.js';
import { uuidSchema } from '../../shared/wire-rules.js';
import type { App } from '../context.js';
import { adminErrorResponses, errorResponse } from '../http/schemas.js';
import { auditAdminWrite } from '../merchants/admin-audit.js';
import { adminRouteMeta, MerchantIdParamsSchema, requireMerchant } from '../merchants/admin-schemas.js';
import { insertPortalLink } from './portal-links.repository.js';
import { listPortalSessions, revokePortalSession } from './portal-sessions.repository.js';
import { newPortalToken } from './portal-tokens.js';

const PortalLinkSchema = z
  .object({
    url: z.url().openapi({
      description:
        "Opens a portal session for the merchant: give it to the merchant's person. On PUBLIC_BASE_URL; used once",
      example: 'https://rewards.example/portal/enter?token=Zm9v…',
    }),
    expiresAt: z.number().int().openapi({ description: 'Epoch milliseconds: unused by then, the link opens nothing' }),
  })
  .openapi('AdminPortalLink');

const PortalSessionSchema = z
  .object({
    id: uuidSchema(),
    createdAt: z.number().int().openapi({ description: 'Epoch milliseconds: when the link was opened' }),
    expiresAt: z
      .number()
      .int()
      .openapi({ description: 'Epoch milliseconds: the session ends then (PORTAL_SESSION_LIFETIME_MS, 8 hours)' }),
    revokedAt: z.number().int().nullable(),
    revokedBy: z.string().nullable().openapi({ description: 'The operator who revoked it' }),
    active: z.boolean().openapi({ description: 'Neither revoked nor expired' }),
  })
  .openapi('AdminPortalSession');

const SessionParamsSchema = MerchantIdParamsSchema.extend({
  sessionId: uuidSchema().openapi({ param: { name: 'sessionId', in: 'path' } }),
});

/**
 * The operator's side of the merchant portal (docs/portal.md): issue a link for one merchant, list the
 * merchant's portal sessions, revoke one. Each write is audited under the operator.
 */
export function registerPortalAdminRoutes(app: App): void {
  const create = createRoute({
    method: 'post',
    path: '/admin/v1/merchants/{merchantId}/portal-links',
    operationId: 'adminCreatePortalLink',
    ...adminRouteMeta,
    summary: "A link to the merchant's portal: valid 15 minutes (PORTAL_LINK_LIFETIME_MS), used once",
    description:
      'No body. Opening the link starts a portal session for this merchant (a cookie lasting ' +
      'PORTAL_SESSION_LIFETIME_MS, 8 hours by default) in which its people see its jobs and webhook ' +
      'deliveries and can abort a job, redeliver an event or send a test event. The token is shown only in ' +
      'this answer; the service keeps its hash.',
    request: { params: MerchantIdParamsSchema },
    responses: {
      201: { description: 'The link', content: { 'application/json': { schema: PortalLinkSchema } } },
      409: errorResponse('CONFLICT (13): the merchant is disabled'),
      ...adminErrorResponses,
    },
  });
  app.openapi(create, async (c) => {
    const merchantId = c.req.valid('param').merchantId.toLowerCase();
    const { db, config } = c.get('deps');
    const token = newPortalToken();
    const link = await db.transaction().execute(async (trx) => {
      const merchant = await requireMerchant(trx, merchantId);
      if (merchant.status !== 'ACTIVE') throw new AppError('CONFLICT', 'The merchant is disabled');
      const created = await insertPortalLink(
        trx,
        { merchantId, token, createdBy: c.get('operator') ?? '' },
        config.PORTAL_LINK_LIFETIME_MS,
      );
      // The token never goes into the log: the link's id and end do.
      await auditAdminWrite(c, trx, {
        action: 'portal.link.create',
        target: merchantId,
        after: { linkId: created.id, expiresAt: created.expiresAt.getTime() },
      });
      return created;
    });
    const url = `${publicBaseUrl(config)}/portal/enter?token=${encodeURIComponent(token)}`;
    c.header('Cache-Control', 'no-store');
    return c.json({ url, expiresAt: link.expiresAt.getTime() }, 201);
  });

  const list = createRoute({
    method: 'get',
    path: '/admin/v1/merchants/{merchantId}/portal-sessions',
    operationId: 'adminListPortalSessions',
    ...adminRouteMeta,
    summary: "The merchant's portal sessions, newest first",
    description: 'Active, expired and revoked ones; those ended more than 7 days ago are removed.',
    request: { params: MerchantIdParamsSchema },
    responses: {
      200: {
        description: 'The sessions',
        content: { 'application/json': { schema: z.object({ sessions: z.array(PortalSessionSchema) }) } },
      },
      ...adminErrorResponses,
    },
  });
  app.openapi(list, async (c) => {
    const merchantId = c.req.valid('param').merchantId.toLowerCase();
    const { db } = c.get('deps');
    await requireMerchant(db, merchantId);
    return c.json({ sessions: await listPortalSessions(db, merchantId) }, 200);
  });

  const revoke = createRoute({
    method: 'delete',
    path: '/admin/v1/merchants/{merchantId}/portal-sessions/{sessionId}',
    operationId: 'adminRevokePortalSession',
    ...adminRouteMeta,
    summary: 'End a portal session at once',
    description: 'Its next request is refused (401) and its page asks for a new link. Revoking twice is no error.',
    request: { params: SessionParamsSchema },
    responses: {
      204: { description: 'Revoked' },
      ...adminErrorResponses,
    },
  });
  app.openapi(revoke, async (c) => {
    const params = c.req.valid('param');
    const merchantId = params.merchantId.toLowerCase();
    const sessionId = params.sessionId.toLowerCase();
    const revoked = await c
      .get('deps')
      .db.transaction()
      .execute(async (trx) => {
        const found = await revokePortalSession(trx, { merchantId, sessionId, operator: c.get('operator') ?? '' });
        if (found)
          await auditAdminWrite(c, trx, { action: 'portal.session.revoke', target: sessionId, after: { merchantId } });
        return found;
      });
    if (!revoked) throw new AppError('NOT_FOUND', 'Portal session not found');
    return c.body(null, 204);
  });
}
