// The webhook view: the merchant's endpoint (never its secret), a test event, and the delivery log with
// every attempt, filtered and paged, each event sendable again.
import { announce, api, h, queryOf, router, selectField, table, timeElement } from './portal-dom.js';

const STATES = ['pending', 'delivered', 'failed', 'dropped'];
const TYPES = ['job.completed', 'job.failed', 'job.cancelled', 'webhook.test'];
const PAGE = 10;

function endpointSection(endpoint, message) {
  const sendTest = async () => {
    try {
      const sent = await api('webhook/test', { method: 'POST' });
      announce(message, `Test event ${sent.eventId} queued.`);
    } catch (error) {
      announce(message, error.message, 'alert');
    }
  };
  if (!endpoint) {
    return h(
      'section',
      { 'aria-labelledby': 'endpoint-title' },
      h('h2', { id: 'endpoint-title' }, 'Endpoint'),
      h('p', {}, 'No webhook endpoint is set.'),
    );
  }
  return h(
    'section',
    { 'aria-labelledby': 'endpoint-title' },
    h('h2', { id: 'endpoint-title' }, 'Endpoint'),
    h(
      'dl',
      { class: 'summary' },
      h('dt', {}, 'URL'),
      h('dd', { id: 'endpoint-url' }, endpoint.url),
      h('dt', {}, 'Events'),
      h('dd', {}, endpoint.events.join(', ')),
      h('dt', {}, 'Status'),
      h('dd', {}, endpoint.enabled ? 'Enabled' : `Disabled (${endpoint.disabledReason ?? 'failing'})`),
      endpoint.failingSince ? [h('dt', {}, 'Failing since'), h('dd', {}, timeElement(endpoint.failingSince))] : null,
    ),
    h('button', { type: 'button', onclick: sendTest, disabled: !endpoint.enabled }, 'Send a test event'),
  );
}

function attemptsElement(attempts) {
  if (attempts.length === 0) return h('span', {}, 'None yet');
  return h(
    'details',
    {},
    h('summary', {}, `${attempts.length} attempt${attempts.length === 1 ? '' : 's'}`),
    h(
      'ol',
      { class: 'attempts' },
      attempts.map((attempt) =>
        h(
          'li',
          {},
          timeElement(attempt.at),
          ` · ${attempt.status ?? 'no answer'} · ${attempt.durationMs} ms`,
          attempt.error ? ` · ${attempt.error}` : '',
        ),
      ),
    ),
  );
}

export async function webhookView(main, search) {
  const filters = {
    status: search.get('status') ?? '',
    type: search.get('type') ?? '',
    jobId: search.get('jobId') ?? '',
  };
  const after = search.get('after') ?? '';
  const [{ endpoint }, page] = await Promise.all([
    api('webhook'),
    api(`webhook/deliveries${queryOf({ ...filters, after, limit: String(PAGE) })}`),
  ]);
  const message = h('p', { class: 'message', id: 'webhook-message' });

  const redeliver = async (eventId) => {
    try {
      const sent = await api(`webhook/deliveries/${encodeURIComponent(eventId)}/redeliver`, { method: 'POST' });
      announce(message, `Event ${sent.eventId} queued to be sent again.`);
    } catch (error) {
      announce(message, error.message, 'alert');
    }
  };
  const rows = page.deliveries.map((delivery) =>
    h(
      'tr',
      { 'data-event-id': delivery.eventId },
      h('th', { scope: 'row' }, h('code', {}, delivery.eventId)),
      h('td', {}, delivery.type),
      h(
        'td',
        {},
        delivery.jobId ? h('a', { href: `/portal/jobs/${encodeURIComponent(delivery.jobId)}` }, delivery.jobId) : '—',
      ),
      h(
        'td',
        {},
        h('span', { class: `badge ${delivery.state}` }, delivery.state),
        delivery.lastError ? h('div', { class: 'hint' }, delivery.lastError) : null,
      ),
      h('td', {}, timeElement(delivery.createdAt)),
      h('td', {}, attemptsElement(delivery.attempts)),
      h(
        'td',
        {},
        h(
          'button',
          { type: 'button', onclick: () => redeliver(delivery.eventId), 'aria-label': `Redeliver ${delivery.eventId}` },
          'Redeliver',
        ),
      ),
    ),
  );
  const filter = h(
    'form',
    {
      class: 'filters',
      action: '/portal/webhook',
      method: 'get',
      'aria-label': 'Filter deliveries',
      onsubmit: (event) => {
        event.preventDefault();
        const form = new FormData(event.currentTarget);
        router.navigate(
          `/portal/webhook${queryOf({ status: form.get('status'), type: form.get('type'), jobId: filters.jobId })}`,
        );
      },
    },
    selectField('filter-status', 'status', 'Delivery state', STATES, filters.status),
    selectField('filter-type', 'type', 'Event type', TYPES, filters.type),
    h('button', { type: 'submit' }, 'Apply filter'),
  );
  main.replaceChildren(
    h('h1', {}, 'Webhook'),
    endpointSection(endpoint, message),
    message,
    h(
      'section',
      { 'aria-labelledby': 'deliveries-title' },
      h('h2', { id: 'deliveries-title' }, 'Delivery log'),
      filters.jobId
        ? h(
            'p',
            {},
            'Events of job ',
            h('code', {}, filters.jobId),
            ' · ',
            h('a', { href: '/portal/webhook' }, 'all events'),
          )
        : null,
      filter,
      page.deliveries.length === 0
        ? h('p', {}, 'No deliveries.')
        : table('Deliveries, newest first', ['Event', 'Type', 'Job', 'State', 'Created', 'Attempts', 'Action'], rows, {
            id: 'deliveries',
          }),
      h(
        'nav',
        { class: 'paging', 'aria-label': 'Delivery pages' },
        after ? h('a', { href: `/portal/webhook${queryOf(filters)}` }, 'Newest deliveries') : null,
        page.next
          ? h('a', { href: `/portal/webhook${queryOf({ ...filters, after: page.next })}`, rel: 'next' }, 'Next page')
          : null,
      ),
    ),
  );
  return undefined;
}
