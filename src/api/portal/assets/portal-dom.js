// What every view of the portal uses: building elements, calling the portal's JSON API with the
// session's CSRF token, and formatting. Plain DOM, no framework: text always goes in as text nodes,
// never as markup, so nothing the API answers can become script.

/** The session as GET /portal/api/session answers it (set once by portal.js). */
export const session = { csrfToken: '', merchant: { id: '', name: '' }, expiresAt: 0 };

/**
 * An element: `h('a', { href: '/portal' }, 'Jobs')`. Attributes starting with `on` are listeners;
 * `false`, `null` and `undefined` attributes are left out; children are nodes or text.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2).toLowerCase(), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Number.POSITIVE_INFINITY)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** An API answer other than 2xx: its status and the message the API gave. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** Calls /portal/api/<path>; writes carry the CSRF token. A 401 means the session ended: say so. */
export async function api(path, { method = 'GET' } = {}) {
  const headers = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = session.csrfToken;
  const response = await fetch(`/portal/api/${path}`, { method, headers, credentials: 'same-origin' });
  const body = await response.json().catch(() => ({}));
  if (response.status === 401) {
    sessionEnded();
    throw new ApiError(401, 'Your portal session has ended.');
  }
  if (!response.ok)
    throw new ApiError(response.status, body.errorMessage || `The request failed (${response.status}).`);
  return body;
}

/** Replaces the page with the notice that the session is over (expired or revoked). */
export function sessionEnded() {
  const main = document.getElementById('main');
  main.replaceChildren(
    h('h1', {}, 'Your portal session has ended'),
    h('p', {}, 'It expired or was revoked. Ask your operator for a new portal link.'),
  );
  main.focus();
}

/** A query string of the set values of `params` (`?a=1&b=2`, or '' when none is set). */
export function queryOf(params) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) query.set(name, value);
  const text = query.toString();
  return text ? `?${text}` : '';
}

/** Epoch milliseconds as local date and time; a dash for none. */
export function when(epochMs) {
  if (epochMs === null || epochMs === undefined) return '—';
  return new Date(epochMs).toLocaleString();
}

/** A `<time>` element for epoch milliseconds. */
export function timeElement(epochMs) {
  if (epochMs === null || epochMs === undefined) return '—';
  return h('time', { datetime: new Date(epochMs).toISOString() }, when(epochMs));
}

/** A `<select>` with its label; `current` is selected; the first option is "All". */
export function selectField(id, name, label, values, current) {
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    h(
      'select',
      { id, name },
      h('option', { value: '' }, 'All'),
      values.map((value) => h('option', { value, selected: value === current }, value)),
    ),
  );
}

/** A live region's message: `status` for news, `alert` for a failure. */
export function announce(region, text, kind = 'status') {
  region.className = `message ${kind}`;
  region.setAttribute('role', kind);
  region.textContent = text;
}

/** A table in a scrolling wrapper (narrow screens scroll it sideways, not the page). */
export function table(caption, headings, rows, attributes = {}) {
  return h(
    'div',
    { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': caption },
    h(
      'table',
      attributes,
      h('caption', {}, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headings.map((heading) => h('th', { scope: 'col' }, heading)),
        ),
      ),
      h('tbody', {}, rows),
    ),
  );
}

/** Whether a job state is an end. */
export function isFinished(state) {
  return state === 'completed' || state === 'failed' || state === 'cancelled';
}

/** A job's progress as a `<progress>` with its percentage beside it. */
export function progressElement(status) {
  const percent = Math.round(status.progress);
  return h(
    'span',
    { class: 'progress' },
    h('progress', { max: 100, value: percent, 'aria-label': `Progress of job ${status.jobId}` }, `${percent}%`),
    h('span', { class: 'percent' }, `${percent}%`),
  );
}

/** The result counts of a job as a description list (none yet: a dash). */
export function countsElement(result) {
  if (!result) return h('span', {}, '—');
  return h(
    'dl',
    { class: 'counts' },
    Object.entries(result).map(([name, count]) => [h('dt', {}, name), h('dd', {}, String(count))]),
  );
}

/** Moves to another view of the portal without reloading the page (portal.js sets the real one). */
export const router = { navigate: (url) => window.location.assign(url) };
