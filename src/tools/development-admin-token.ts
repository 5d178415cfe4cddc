import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** Where `npm start` keeps the admin token it made: the working directory, ignored by git. */
export const DEVELOPMENT_ADMIN_TOKEN_FILE = '.admin-token.dev';

/**
 * The admin token of a development machine when neither ADMIN_TOKEN nor ADMIN_TOKENS is set: read from
 * the file, or made once (32 random bytes, 64 hex characters) and written there, so that a dashboard
 * login or a script's token keeps working across restarts.
 */
export function developmentAdminToken(file = DEVELOPMENT_ADMIN_TOKEN_FILE): string {
  const path = resolve(file);
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const token = randomBytes(32).toString('hex');
  // `wx`: of two starts at once, the second reads the first's token rather than replacing it.
  try {
    writeFileSync(path, `${token}\n`, { flag: 'wx', mode: 0o600 });
    return token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(path, 'utf8').trim();
    throw error;
  }
}
