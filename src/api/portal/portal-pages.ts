/**
 * The portal's HTML: the one page the script fills in (every view of the portal is this page at its own
 * address), and the short pages that say why no portal opens. No inline script or style: the strict
 * Content-Security-Policy (portal-security-headers.ts) allows only this listener's files.
 */

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

function page(title: string, assetsBase: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(title)}</title>
    <link rel="stylesheet" href="${assetsBase}/portal.css" />${head}
  </head>
  <body>
${body}
  </body>
</html>
`;
}

/** The portal itself: the header, the navigation, and the main region the script renders views into. */
export function portalShell(assetsBase: string): string {
  return page(
    'Merchant portal',
    assetsBase,
    `    <a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <p class="brand">Merchant portal <span id="merchant-name"></span></p>
      <nav aria-label="Portal">
        <ul>
          <li><a href="/portal" data-nav="jobs">Jobs</a></li>
          <li><a href="/portal/webhook" data-nav="webhook">Webhook</a></li>
        </ul>
      </nav>
    </header>
    <main id="main" tabindex="-1"><p>Loading…</p></main>
    <footer class="bottom"><p id="session-end"></p></footer>
    <script type="module" src="${assetsBase}/portal.js"></script>`,
  );
}

/**
 * Answers a link that opened a session: the page moves on to /portal by itself (a meta refresh, which
 * the policy allows, unlike a script), so the link leaves the address bar and the history. Not a 303:
 * a browser that followed the link from another site (a mail, a chat) would not send a `SameSite=Strict`
 * cookie on a redirect of that same navigation, and /portal would find no session.
 */
export function enteredPage(assetsBase: string): string {
  return page(
    'Merchant portal',
    assetsBase,
    `    <main class="notice">
      <h1>Opening the portal…</h1>
      <p><a href="/portal">Continue to the portal</a></p>
    </main>`,
    '\n    <meta http-equiv="refresh" content="0; url=/portal" />',
  );
}

/** Why no portal opens (a used, expired or unknown link; an ended or revoked session). */
export function refusalPage(assetsBase: string, heading: string, text: string): string {
  return page(
    'Merchant portal: no access',
    assetsBase,
    `    <main class="notice">
      <h1>${escapeHtml(heading)}</h1>
      <p>${escapeHtml(text)}</p>
      <p>Portal links are issued by the gateway's operators: ask yours for a new one.</p>
    </main>`,
  );
}
