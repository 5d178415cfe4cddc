import { z } from '@hono/zod-openapi';
import { type BetSlipAnswerFields, betSlipAnswerFields } from './bet-slip-answer-fields.js';

type AnswerShape = { [Name in keyof BetSlipAnswerFields]: BetSlipAnswerFields[Name]['schema'] };

/**
 * The fields' schemas in the published document's order: the answer's, but for the items, which it
 * lists after the field they are `documentedAfter`.
 */
function documentedShape(): AnswerShape {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of betSlipAnswerFields) {
    if (field.from === 'items') continue;
    shape[name] = field.schema;
    for (const [placedName, placed] of betSlipAnswerFields) {
      if (placed.from === 'items' && placed.documentedAfter === name) shape[placedName] = placed.schema;
    }
  }
  if (Object.keys(shape).length !== betSlipAnswerFields.length) {
    throw new Error('a /betSlip answer field is documented after a field the answer does not have');
  }
  return shape as AnswerShape;
}

/**
 * A successful /betSlip answer, derived from its one definition (bet-slip-answer-fields.ts). The route
 * documents it and never runs it on an answer (the answer's text is written without it,
 * library-bypasses/bet-slip-answer.ts); the route's tests parse real answers with it.
 */
export const BetSlipResponseSchema = z.object(documentedShape()).openapi('BetSlipResponse');
