import type { z } from '@hono/zod-openapi';
import { BET_SLIP_ITEM_FIELDS } from './bet-slip-answer-fields.js';

type ItemFields = typeof BET_SLIP_ITEM_FIELDS;

/**
 * One bet slip item of a session, as the admin API takes it and the seeds write it: every field of the
 * answer's item (bet-slip-answer-fields.ts), null where an optional one is unknown.
 */
export type BetSlipItemInput = {
  [Name in keyof ItemFields]:
    | Exclude<z.output<ItemFields[Name]>, undefined>
    | (undefined extends z.output<ItemFields[Name]> ? null : never);
};

/** The item's fields in the answer's order. */
const itemFieldNames = Object.keys(BET_SLIP_ITEM_FIELDS) as Array<keyof ItemFields>;

/** The optional ones: left out of the item when null. */
const leftOutWhenNull = new Set(
  itemFieldNames.filter((name) => BET_SLIP_ITEM_FIELDS[name].safeParse(undefined).success),
);

/**
 * A session's bet slip items as the JSON array /betSlip answers (docs/interface.md): fields in the
 * answer's order (JSON.stringify writes an object's members in the order they were added), the optional
 * ones left out when unknown, `margin` kept as null where the market has none. Written once, when the
 * session is created (`sessions.bet_slip_json`), since a session's items never change: /betSlip then
 * splices this text into its answer instead of building it per read
 * (src/api/library-bypasses/bet-slip-answer.ts; measured on Node 24, building the answer with `c.json`
 * from columns instead cost +24 % CPU per /betSlip answer).
 */
export function betSlipJson(items: readonly BetSlipItemInput[]): string {
  return JSON.stringify(
    items.map((item) => {
      const written: Record<string, unknown> = {};
      for (const name of itemFieldNames) {
        const value = item[name];
        if (value !== null || !leftOutWhenNull.has(name)) written[name] = value;
      }
      return written;
    }),
  );
}
