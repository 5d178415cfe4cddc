import type { BetSlipSession } from '../shared/repositories/sessions.repository.js';

/**
 * The JSON text of a successful /betSlip answer (docs/interface.md), built from a few columns rather
 * than by Postgres' json functions, whose CPU the database would spend on every read on the same
 * two cores: fields in the interface's order, the optional ones left out when unknown, `language`
 * ENG and `test` false by default. `balance` is Postgres' text of the numeric, written as is so that
 * the client gets it exactly as stored; the items are the JSON written once with the session.
 */
export function betSlipAnswerJson(session: BetSlipSession): string {
  return (
    `{"playerId":${JSON.stringify(session.playerId)},"balance":${session.balance}` +
    `,"currency":${JSON.stringify(session.currency)}` +
    optional('username', session.username) +
    optional('nickname', session.nickname) +
    optional('firstName', session.firstName) +
    optional('lastName', session.lastName) +
    optional('gender', session.gender) +
    optional('email', session.email) +
    optional('phone', session.phone) +
    optional('ipAddress', session.ipAddress) +
    `,"language":${JSON.stringify(session.language ?? 'ENG')}` +
    optional('devicePlatform', session.devicePlatform) +
    optional('address', session.address) +
    optional('city', session.city) +
    optional('country', session.country) +
    `,"test":${session.test === true},"errorCode":0,"errorMessage":"","betSlip":${session.betSlipJson}}`
  );
}

/** `,"name":"value"`, or nothing when the value is unknown. */
function optional(name: string, value: string | null): string {
  return value === null ? '' : `,"${name}":${JSON.stringify(value)}`;
}
