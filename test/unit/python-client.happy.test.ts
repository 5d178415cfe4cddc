import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The Python client's own unit tests (unittest, standard library only), run here so that `npm test` runs
// them: signing against docs/signing-test-vectors.json, bulk splitting, retries, clock skew, pages, webhooks.

const run = promisify(execFile);
const clientDirectory = fileURLToPath(new URL('../../clients/python/', import.meta.url));

describe('clients/python unit tests', () => {
  it('pass, all of them', async () => {
    const { stderr } = await run('python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.'], {
      cwd: clientDirectory,
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
      timeout: 60_000,
    });
    // unittest reports on stderr: "Ran 47 tests in 1.2s" then "OK".
    const ran = Number(/^Ran (\d+) tests? /m.exec(stderr)?.[1]);
    expect(ran).toBeGreaterThanOrEqual(47);
    expect(stderr.trimEnd()).toMatch(/\nOK$/);
  });
});
