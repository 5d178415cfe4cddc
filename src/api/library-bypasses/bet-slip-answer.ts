import { betSlipAnswerFields } from '../bet-slip/bet-slip-answer-fields.js';
import type { BetSlipSession } from './bet-slip-session.js';

/** The answer's values that change from one request to the next, in the order betSlipAnswerJson writes them. */
const WRITTEN = ['playerId:text', 'balance:numeric', 'currency:text', 'profile', 'test:flag', 'betSlip:items'];

/** The text before each of the WRITTEN values, then the text after the last one. */
type FixedText = [string, string, string, string, string, string, string];

/**
 * The answer's fixed text around its values, from the answer's definition (bet-slip-answer-fields.ts),
 * built once at module load: each value's key, led by `{` or a comma, and the constant members whole.
 * The profile's members bring their own keys (the lookup writes them, bet-slip-session.ts). Throws
 * when the definition's values are not the ones, in the order, that betSlipAnswerJson writes.
 */
function fixedText(): FixedText {
  const texts: string[] = [];
  const values: string[] = [];
  let text = '';
  let separator = '{';
  for (const [name, field] of betSlipAnswerFields) {
    const key = `${separator}${JSON.stringify(name)}:`;
    separator = ',';
    if (field.from === 'constant') {
      text += key + JSON.stringify([...field.schema.values][0]);
    } else if (field.from === 'profile') {
      if (values.at(-1) === 'profile' && text === '') continue;
      texts.push(text);
      values.push('profile');
      text = '';
    } else {
      texts.push(text + key);
      values.push(`${name}:${field.from}`);
      text = '';
    }
  }
  if (values.join() !== WRITTEN.join()) {
    throw new Error(`the /betSlip answer's definition writes ${values.join()}, its writer ${WRITTEN.join()}`);
  }
  return [...texts, `${text}}`] as FixedText;
}

const [beforePlayerId, beforeBalance, beforeCurrency, beforeProfile, beforeTest, beforeBetSlip, end] = fixedText();

/**
 * The JSON text of a successful /betSlip answer (docs/interface.md), put together from a few columns
 * rather than by Postgres' json functions over the whole answer, whose CPU the database would spend on
 * every read on the same two cores: fields in the answer's order, the optional ones left out when
 * unknown (the profile's members come from the query as one text), `test` false by default. `balance`
 * is Postgres' text of the numeric, written as is so that the client gets it exactly as stored; the
 * items are the JSON written once with the session (src/api/bet-slip/bet-slip-json.ts).
 *
 * Where the API steps around the schema's serializer: measured on Node 24, the library's way (the
 * session's columns selected one by one, the answer written by `c.json`) cost +24 % CPU per /betSlip
 * answer.
 */
export function betSlipAnswerJson(session: BetSlipSession): string {
  return (
    `${beforePlayerId}${JSON.stringify(session.playerId)}${beforeBalance}${session.balance}` +
    `${beforeCurrency}${JSON.stringify(session.currency)}${beforeProfile}${session.profileJson}` +
    `${beforeTest}${session.test === true}${beforeBetSlip}${session.betSlipJson}${end}`
  );
}
