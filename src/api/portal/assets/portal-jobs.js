// The jobs view: the merchant's jobs, newest first, filtered by state and kind, a page at a time, the
// progress of those still running kept live through their event streams.
import {
  api,
  countsElement,
  h,
  isFinished,
  progressElement,
  queryOf,
  router,
  selectField,
  table,
  timeElement,
} from './portal-dom.js';

const STATES = ['running', 'completed', 'failed', 'cancelling', 'cancelled'];
const KINDS = ['cancel', 'bulkCancel', 'bulkCancelByQuery'];
const PAGE = 10;
/** Streams open at once for one list: the merchant's streams are bounded, and a screen shows few rows. */
const MAX_LIVE = 5;

function jobRow(status) {
  return h(
    'tr',
    { 'data-job-id': status.jobId },
    // The id's first 8 characters (enough to tell jobs apart on a screen, short on a phone); the full id is
    // the link's accessible name and title, and the job's own page shows it.
    h(
      'th',
      { scope: 'row' },
      h(
        'a',
        {
          href: `/portal/jobs/${encodeURIComponent(status.jobId)}`,
          title: status.jobId,
          'aria-label': `Job ${status.jobId}`,
        },
        h('code', {}, `${status.jobId.slice(0, 8)}…`),
      ),
    ),
    h('td', {}, status.operation),
    h('td', { class: 'state' }, h('span', { class: `badge ${status.state}` }, status.state)),
    h('td', { class: 'progress-cell' }, progressElement(status)),
    h('td', { class: 'counts-cell' }, countsElement(status.result)),
    h('td', {}, timeElement(status.createdAt)),
  );
}

/**
 * Follows one job's event stream and calls `update` with each status it carries, until the job ends.
 * Answers what closes the stream.
 */
export function followJob(jobId, update) {
  const events = new EventSource(`/portal/api/jobs/${encodeURIComponent(jobId)}/events`);
  const onStatus = (event) => update(JSON.parse(event.data));
  events.addEventListener('progress', onStatus);
  for (const end of ['completed', 'failed', 'cancelled']) {
    events.addEventListener(end, (event) => {
      events.close();
      onStatus(event);
    });
  }
  // A stream refused (the session ended, too many streams) is not retried over and over.
  events.addEventListener('error', () => {
    if (events.readyState === EventSource.CLOSED) events.close();
  });
  return () => events.close();
}

export async function jobsView(main, search) {
  const state = search.get('state') ?? '';
  const kind = search.get('kind') ?? '';
  const after = search.get('after') ?? '';
  const page = await api(`jobs${queryOf({ state, kind, after, limit: String(PAGE) })}`);

  const filter = h(
    'form',
    {
      class: 'filters',
      action: '/portal',
      method: 'get',
      'aria-label': 'Filter jobs',
      onsubmit: (event) => {
        event.preventDefault();
        const form = new FormData(event.currentTarget);
        router.navigate(`/portal${queryOf({ state: form.get('state'), kind: form.get('kind') })}`);
      },
    },
    selectField('filter-state', 'state', 'State', STATES, state),
    selectField('filter-kind', 'kind', 'Kind', KINDS, kind),
    h('button', { type: 'submit' }, 'Apply filter'),
  );

  const rows = page.jobs.map(jobRow);
  const paging = h(
    'nav',
    { class: 'paging', 'aria-label': 'Job pages' },
    after ? h('a', { href: `/portal${queryOf({ state, kind })}` }, 'Newest jobs') : null,
    page.next
      ? h('a', { href: `/portal${queryOf({ state, kind, after: page.next })}`, rel: 'next' }, 'Next page')
      : null,
  );
  main.replaceChildren(
    h('h1', {}, 'Jobs'),
    h('p', { class: 'hint' }, 'Cancellation jobs, newest first. A job is listed once a worker has taken it.'),
    filter,
    page.jobs.length === 0
      ? h('p', { id: 'no-jobs' }, 'No jobs match.')
      : table('Jobs', ['Job', 'Kind', 'State', 'Progress', 'Counts', 'Created'], rows, { id: 'jobs' }),
    paging,
  );

  const stops = page.jobs
    .filter((status) => !isFinished(status.state))
    .slice(0, MAX_LIVE)
    .map((status) =>
      followJob(status.jobId, (next) => {
        const row = main.querySelector(`tr[data-job-id="${CSS.escape(status.jobId)}"]`);
        row?.replaceWith(jobRow(next));
      }),
    );
  return () => {
    for (const stop of stops) stop();
  };
}
