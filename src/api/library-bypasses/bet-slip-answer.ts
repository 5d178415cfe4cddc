import type { BetSlipSession } from './bet-slip-session.js';

/**
 * The JSON text of a successful /betSlip answer (docs/interface.md), put together from a few columns
 * rather than by Postgres' json functions over the whole answer, whose CPU the database would spend on
 * every read on the same two cores: fields in the interface's order, the optional ones left out when
 * unknown (the profile's members come from the query as one text), `test` false by default. `balance`
 * is Postgres' text of the numeric, written as is so that the client gets it exactly as stored; the
 * items are the JSON written once with the session (src/api/bet-slip/bet-slip-json.ts).
 *
 * Where the API steps around the schema's serializer: measured on Node 24, the library's way (the
 * session's columns selected one by one, the answer written by `c.json`) cost +24 % CPU per /betSlip
 * answer (issue 41).
 */
export function betSlipAnswerJson(session: BetSlipSession): string {
  return (
    `{"playerId":${JSON.stringify(session.playerId)},"balance":${session.balance}` +
    `,"currency":${JSON.stringify(session.currency)}${session.profileJson}` +
    `,"test":${session.test === true},"errorCode":0,"errorMessage":"","betSlip":${session.betSlipJson}}`
  );
}
