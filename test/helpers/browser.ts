import { execFileSync } from 'node:child_process';
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium } from 'playwright-core';

const CANDIDATES = ['chromium', 'chromium-browser', 'google-chrome'];

/**
 * The system's Chromium (Debian's `chromium` package, installed by .ci/run). playwright-core never
 * downloads a browser of its own: this machine reaches no download site. Missing Chromium is a
 * failure with the fix in the message, never a skipped test.
 */
function chromiumPath(): string {
  for (const name of CANDIDATES) {
    try {
      const path = execFileSync('which', [name], { encoding: 'utf8' }).trim();
      if (path) return path;
    } catch {
      // `which` exits 1 when the name is not on PATH: try the next one.
    }
  }
  throw new Error(
    `No Chromium found on PATH (looked for ${CANDIDATES.join(', ')}). Install it: apt-get install -y chromium`,
  );
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true });
}

export interface OfflineContext {
  context: BrowserContext;
  /** Every request the page tried to send off this machine, refused. */
  blocked: string[];
}

/**
 * A browser context without internet: every request to anything but the loopback interface is
 * aborted and remembered, as on a machine with no outside network. `data:` and `blob:` URLs never
 * reach the network and pass.
 */
export async function offlineContext(browser: Browser, options: BrowserContextOptions = {}): Promise<OfflineContext> {
  const context = await browser.newContext(options);
  const blocked: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    const local =
      url.protocol === 'data:' ||
      url.protocol === 'blob:' ||
      url.hostname === '127.0.0.1' ||
      url.hostname === 'localhost' ||
      url.hostname === '[::1]';
    if (local) return route.continue();
    blocked.push(url.href);
    return route.abort('internetdisconnected');
  });
  return { context, blocked };
}
