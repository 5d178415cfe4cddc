import { z } from '@hono/zod-openapi';

/**
 * The /betSlip answer (docs/interface.md), written down once: every field in the order the answer
 * writes it, with its schema. The OpenAPI response schema (bet-slip-answer-schema.ts), the lookup's
 * profile text (library-bypasses/bet-slip-session.ts), the answer's fixed text
 * (library-bypasses/bet-slip-answer.ts) and the items' JSON (bet-slip-json.ts) are all derived from it,
 * so that the answer and its documented shape cannot drift apart.
 */

/**
 * One bet slip item. An optional field is left out of the item when unknown; `margin` is written as
 * null where the market has none.
 */
export const BET_SLIP_ITEM_FIELDS = {
  sportId: z.string(),
  sportName: z.string(),
  betSlipId: z.string().optional(),
  matchName: z.string(),
  matchId: z.string(),
  competitionId: z.string(),
  competitionName: z.string(),
  marketId: z.string(),
  marketName: z.string(),
  marketOptionId: z.string(),
  marketOptionName: z.string(),
  odd: z.number(),
  margin: z.number().nullable(),
  homeTeam: z.string(),
  awayTeam: z.string(),
};

/** Where the answer's text takes a field's value from. */
type AnswerField =
  /** A text column of the lookup, written by Node as a JSON string. */
  | { schema: z.ZodType; from: 'text' }
  /** Postgres' text of a `numeric` column, written as is: a JSON number with exactly the stored digits. */
  | { schema: z.ZodType; from: 'numeric' }
  /**
   * A member of the profile text Postgres writes: `sql` is the expression it comes from, over the
   * lookup's `p` (the player, absent when the player has no row) and `s` (the session). A NULL leaves
   * the member out of the answer, so only a field with a default in `sql` may be required.
   */
  | { schema: z.ZodType; from: 'profile'; sql: string }
  /** A boolean column, false when NULL. */
  | { schema: z.ZodType; from: 'flag' }
  /** The same in every successful answer: the one value of the schema's literal. */
  | { schema: z.ZodLiteral; from: 'constant' }
  /**
   * The items' JSON array, written once with the session (bet-slip-json.ts). `documentedAfter`: the
   * published OpenAPI document lists the items right after that field, as docs/interface.md does, while
   * the answer writes them last; a schema's property order means nothing to a validator, and moving it
   * would change the committed document and the clients generated from it.
   */
  | { schema: z.ZodType; from: 'items'; documentedAfter: string };

const profileMember = (sql: string) => ({ schema: z.string().optional(), from: 'profile', sql }) as const;

/** Every field of a successful answer, in the order the answer writes them. */
export const BET_SLIP_ANSWER_FIELDS = {
  playerId: { schema: z.string(), from: 'text' },
  balance: { schema: z.number(), from: 'numeric' },
  currency: { schema: z.string(), from: 'text' },
  username: profileMember('p.username'),
  nickname: profileMember('p.nickname'),
  firstName: profileMember('p.first_name'),
  lastName: profileMember('p.last_name'),
  gender: profileMember('p.gender'),
  email: profileMember('p.email'),
  phone: profileMember('p.phone'),
  ipAddress: profileMember('s.ip_address'),
  language: { schema: z.string().openapi({ example: 'ENG' }), from: 'profile', sql: "coalesce(p.language, 'ENG')" },
  devicePlatform: profileMember('s.device_platform'),
  address: profileMember('p.address'),
  city: profileMember('p.city'),
  country: profileMember('p.country'),
  test: { schema: z.boolean(), from: 'flag' },
  errorCode: { schema: z.literal(0), from: 'constant' },
  errorMessage: { schema: z.literal(''), from: 'constant' },
  betSlip: {
    schema: z.array(z.object(BET_SLIP_ITEM_FIELDS).openapi('Bet')),
    from: 'items',
    documentedAfter: 'currency',
  },
} as const satisfies Record<string, AnswerField>;

export type BetSlipAnswerFields = typeof BET_SLIP_ANSWER_FIELDS;

/** The fields in the answer's order, each with its definition (`Object.entries` keeps that order). */
export const betSlipAnswerFields = Object.entries(BET_SLIP_ANSWER_FIELDS) as Array<[string, AnswerField]>;
