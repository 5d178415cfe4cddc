import { createRoute, z } from '@hono/zod-openapi';
import { isUniqueViolation } from '../../shared/db/database-errors.js';
import { AppError } from '../../shared/errors/errors.js';
import { generateSessionToken } from '../bet-slip/session-token.js';
import { insertSession, type PlayerProfile, SESSION_TOKEN_DIGEST_KEY } from '../bet-slip/sessions.repository.js';
import type { App } from '../context.js';
import { adminErrorResponses, identifier, jsonBody } from '../http/schemas.js';
import { auditAdminWrite } from './admin-audit.js';
import {
  adminRouteMeta,
  currencyCodeSchema,
  decimalSchema,
  instantSchema,
  MerchantIdParamsSchema,
  requireMerchant,
} from './admin-schemas.js';

const text = identifier;
/** Absent: keep what the player has; null: clear it. */
const profileText = text.nullish();

const PlayerInputSchema = z
  .strictObject({
    username: profileText,
    nickname: profileText,
    firstName: profileText,
    lastName: profileText,
    gender: z.string().min(1).max(32).nullish().openapi({ description: 'Free text (the interface lists no values)' }),
    email: profileText,
    phone: profileText,
    address: profileText,
    city: profileText,
    country: z
      .string()
      .regex(/^[A-Za-z]{2,3}$/, 'must be an ISO 3166 country code')
      .nullish()
      .openapi({ example: 'MT' }),
    language: z
      .string()
      .regex(/^[A-Za-z]{3}$/, 'must be an ISO 639-3 code: three letters')
      .nullish()
      .openapi({ description: '/betSlip answers ENG when unset', example: 'ENG' }),
    test: z.boolean().optional().openapi({ description: 'A test user; /betSlip answers false when unset' }),
  })
  .openapi({ description: 'Profile fields: absent ones keep their stored value, null clears one' });

const BetInputSchema = z.strictObject({
  sportId: text,
  sportName: text,
  betSlipId: text.nullish(),
  matchName: text,
  matchId: text,
  competitionId: text,
  competitionName: text,
  marketId: text,
  marketName: text,
  marketOptionId: text,
  marketOptionName: text,
  odd: z.number().positive(),
  margin: z.number().nullish().openapi({ description: 'For markets that have one (over/under); else null' }),
  homeTeam: text,
  awayTeam: text,
});

const CreateSessionRequestSchema = z
  .strictObject({
    authToken: z
      .string()
      .min(1)
      .max(1_024)
      .optional()
      .openapi({ description: 'The session token; a random one is generated when absent' }),
    playerId: identifier,
    currency: currencyCodeSchema,
    balance: decimalSchema('nonNegative').openapi({ description: 'The wallet balance in `currency`; 0 or more' }),
    expiresAt: instantSchema
      .nullish()
      .openapi({ description: 'Null or absent: never expires; a past instant is allowed' }),
    player: PlayerInputSchema.default({}),
    ipAddress: z.union([z.ipv4(), z.ipv6()]).nullish(),
    devicePlatform: z.string().min(1).max(32).nullish().openapi({ example: 'desktop' }),
    betSlip: z.array(BetInputSchema).max(1_000).default([]),
  })
  .openapi('AdminCreateSessionRequest');

const CreatedSessionSchema = z
  .object({
    authToken: z.string(),
    expiresAt: z.number().int().nullable().openapi({ description: 'Epoch milliseconds; null: never' }),
  })
  .openapi('AdminCreatedSession');

export function registerCreateSession(app: App): void {
  const route = createRoute({
    method: 'post',
    path: '/admin/v1/merchants/{merchantId}/sessions',
    operationId: 'adminCreateSession',
    ...adminRouteMeta,
    summary: 'Create a game session (player, wallet balance, bet slip) for /betSlip',
    description: 'Creates or updates the player and sets the wallet balance in the session currency.',
    request: { params: MerchantIdParamsSchema, body: jsonBody(CreateSessionRequestSchema) },
    responses: {
      201: { description: 'The session token', content: { 'application/json': { schema: CreatedSessionSchema } } },
      ...adminErrorResponses,
    },
  });

  app.openapi(route, async (c) => {
    const merchantId = c.req.valid('param').merchantId.toLowerCase();
    const body = c.req.valid('json');
    const { db } = c.get('deps');
    await requireMerchant(db, merchantId);

    const token = body.authToken ?? generateSessionToken();
    const expiresAt = body.expiresAt ?? null;
    try {
      await db.transaction().execute(async (trx) => {
        await insertSession(trx, {
          merchantId,
          playerId: body.playerId,
          token,
          currency: body.currency,
          balance: body.balance,
          expiresAt,
          ipAddress: body.ipAddress ?? null,
          devicePlatform: body.devicePlatform ?? null,
          player: toPlayerProfile(body.player),
          betSlip: body.betSlip.map((bet) => ({
            ...bet,
            betSlipId: bet.betSlipId ?? null,
            margin: bet.margin ?? null,
          })),
        });
        // The session token is a credential: only whose session, and until when.
        await auditAdminWrite(c, trx, {
          action: 'session.create',
          target: merchantId,
          after: { playerId: body.playerId, expiresAt: expiresAt?.getTime() ?? null },
        });
      });
    } catch (error) {
      if (isUniqueViolation(error, SESSION_TOKEN_DIGEST_KEY)) {
        throw new AppError('INVALID_REQUEST', 'authToken: already used by another session');
      }
      throw error;
    }
    c.get('logger').info({ merchantId }, 'session created');
    return c.json({ authToken: token, expiresAt: expiresAt?.getTime() ?? null }, 201);
  });
}

function toPlayerProfile(player: z.infer<typeof PlayerInputSchema>): PlayerProfile {
  return {
    username: player.username,
    nickname: player.nickname,
    first_name: player.firstName,
    last_name: player.lastName,
    gender: player.gender,
    email: player.email,
    phone: player.phone,
    address: player.address,
    city: player.city,
    country: player.country,
    language: player.language,
    test: player.test,
  };
}
