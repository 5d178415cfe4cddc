import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { generateKeyRingText } from './key-ring-text.js';

/** Where a development machine keeps its key ring: the working directory, ignored by git. */
export const DEVELOPMENT_KEY_RING_FILE = '.secrets-keys.dev';

/**
 * The key ring of a development machine (`npm start`, `npm run dev`, the CLIs without SECRETS_KEYS):
 * read from the file, or made once and written there, so that secrets sealed by one run still open
 * in the next. Never used with NODE_ENV=production (config.ts refuses to start without SECRETS_KEYS).
 */
export function developmentKeyRing(file = DEVELOPMENT_KEY_RING_FILE): string {
  const path = resolve(file);
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const ring = generateKeyRingText('dev1');
  // `wx`: two processes starting together must not both write a ring; the second reads the first's.
  try {
    writeFileSync(path, `${ring}\n`, { flag: 'wx', mode: 0o600 });
    return ring;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(path, 'utf8').trim();
    throw error;
  }
}
