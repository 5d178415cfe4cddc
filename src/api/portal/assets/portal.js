// The merchant portal's page: reads the session, then shows the view the address names and keeps the
// address and the view in step (links and filters change the address; Back and Forward work).
import { api, h, router, session, sessionEnded } from './portal-dom.js';
import { jobDetailView } from './portal-job.js';
import { jobsView } from './portal-jobs.js';
import { webhookView } from './portal-webhook.js';

const main = document.getElementById('main');
/** Undoes what the view on screen holds open (its event streams). */
let leaveView = () => {};

function viewOf(pathname) {
  const job = /^\/portal\/jobs\/([^/]+)$/.exec(pathname);
  if (job) return { name: 'jobs', render: (search) => jobDetailView(main, decodeURIComponent(job[1]), search) };
  if (pathname === '/portal/webhook') return { name: 'webhook', render: (search) => webhookView(main, search) };
  return { name: 'jobs', render: (search) => jobsView(main, search) };
}

async function show() {
  leaveView();
  leaveView = () => {};
  const view = viewOf(window.location.pathname);
  for (const link of document.querySelectorAll('[data-nav]')) {
    if (link.dataset.nav === view.name) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  main.replaceChildren(h('p', {}, 'Loading…'));
  try {
    leaveView = (await view.render(new URLSearchParams(window.location.search))) ?? (() => {});
  } catch (error) {
    if (error.status === 401) return;
    main.replaceChildren(h('h1', {}, 'Something went wrong'), h('p', { role: 'alert' }, error.message));
  }
  // Focus moves to the new view, so a screen reader reads it and Tab starts there.
  main.focus();
}

router.navigate = (url) => {
  window.history.pushState(null, '', url);
  void show();
};

// Links within the portal change the view in place; downloads and other addresses are left alone.
document.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('a[href]') : null;
  if (!link || link.hasAttribute('download') || event.defaultPrevented) return;
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const url = new URL(link.href);
  if (
    url.origin !== window.location.origin ||
    !url.pathname.startsWith('/portal') ||
    url.pathname.startsWith('/portal/api/')
  )
    return;
  event.preventDefault();
  router.navigate(url.pathname + url.search);
});
window.addEventListener('popstate', () => void show());

try {
  Object.assign(session, await api('session'));
  document.getElementById('merchant-name').textContent = `· ${session.merchant.name}`;
  document.getElementById('session-end').textContent =
    `This session ends at ${new Date(session.expiresAt).toLocaleString()}.`;
  await show();
} catch (error) {
  if (error.status !== 401) sessionEnded();
}
