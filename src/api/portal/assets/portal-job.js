// One job: its state and counts (live while it runs), the abort, its report, and what it did page by
// page: the rewards it cancelled and, for a bulkCancel, the identifiers it did not cancel and why.
import {
  ApiError,
  announce,
  api,
  countsElement,
  h,
  isFinished,
  progressElement,
  queryOf,
  table,
  timeElement,
} from './portal-dom.js';
import { followJob } from './portal-jobs.js';

const PAGE = 10;

function summary(status) {
  return h(
    'dl',
    { class: 'summary', id: 'job-summary' },
    h('dt', {}, 'Kind'),
    h('dd', {}, status.operation),
    h('dt', {}, 'State'),
    h('dd', { id: 'job-state' }, h('span', { class: `badge ${status.state}` }, status.state)),
    h('dt', {}, 'Progress'),
    h('dd', {}, progressElement(status)),
    h('dt', {}, 'Counts'),
    h('dd', {}, countsElement(status.result)),
    h('dt', {}, 'Created'),
    h('dd', {}, timeElement(status.createdAt)),
    h('dt', {}, 'Finished'),
    h('dd', {}, timeElement(status.finishedAt)),
    status.error ? [h('dt', {}, 'Error'), h('dd', {}, status.error)] : null,
  );
}

/**
 * A section listing one of the job's pages (`rewards` or `unapplied`), with Previous and Next: the
 * cursors of the pages seen are kept so Previous goes back without asking the API for a reverse order.
 */
function pagedSection({ id, title, path, headings, rowOf, cursorQuery }) {
  const section = h('section', { id, 'aria-labelledby': `${id}-title` }, h('h2', { id: `${id}-title` }, title));
  const body = h('div');
  const cursors = [null];
  let index = 0;
  const load = async () => {
    const cursor = cursors[index];
    const page = await api(`${path}${queryOf({ ...(cursor ? cursorQuery(cursor) : {}), limit: String(PAGE) })}`);
    const items = page.rewards ?? page.identifiers;
    cursors[index + 1] = page.next;
    body.replaceChildren(
      items.length === 0 && index === 0
        ? h('p', {}, 'None.')
        : table(`${title}, page ${index + 1}`, headings, items.map(rowOf)),
      h(
        'div',
        { class: 'paging' },
        h('span', { class: 'page-number' }, `Page ${index + 1}`),
        h('button', { type: 'button', disabled: index === 0, onclick: () => move(-1) }, 'Previous page'),
        h('button', { type: 'button', disabled: !page.next, onclick: () => move(1) }, 'Next page'),
      ),
    );
  };
  const move = (step) => {
    index += step;
    load().catch((error) => body.replaceChildren(h('p', { role: 'alert' }, error.message)));
  };
  section.append(body);
  return { section, load };
}

export async function jobDetailView(main, jobId) {
  let status;
  try {
    status = await api(`jobs/${encodeURIComponent(jobId)}`);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    main.replaceChildren(
      h('h1', {}, 'Job not found'),
      h('p', { role: 'alert' }, 'There is no job with this id among your jobs.'),
      h('p', {}, h('a', { href: '/portal' }, 'Back to the jobs')),
    );
    return undefined;
  }
  const path = `jobs/${encodeURIComponent(status.jobId)}`;
  const message = h('p', { class: 'message', id: 'job-message' });
  const actions = h('div', { class: 'actions', id: 'job-actions' });
  const head = h('div');
  const render = (next) => {
    status = next;
    head.replaceChildren(summary(status));
    const bulk = status.operation !== 'cancel';
    // replaceChildren writes a null child as the text "null": leave the missing actions out.
    const present = [
      isFinished(status.state) ? null : h('button', { type: 'button', class: 'danger', onclick: abort }, 'Abort job'),
      bulk && isFinished(status.state)
        ? h(
            'a',
            { class: 'button', href: `/portal/api/${path}/report`, download: `job-${status.jobId}.ndjson` },
            'Download report',
          )
        : null,
      h('a', { href: `/portal/webhook${queryOf({ jobId: status.jobId })}` }, 'Webhook deliveries of this job'),
    ];
    actions.replaceChildren(...present.filter((action) => action !== null));
  };
  const abort = async () => {
    if (!window.confirm('Abort this job? Rewards already cancelled stay cancelled.')) return;
    try {
      render(await api(`${path}/abort`, { method: 'POST' }));
      announce(message, `Abort requested: the job is ${status.state}.`);
    } catch (error) {
      announce(message, error.message, 'alert');
    }
  };

  const rewards = pagedSection({
    id: 'rewards',
    title: 'Rewards cancelled',
    path: `${path}/rewards`,
    headings: ['Reward id', 'External id', 'Player'],
    rowOf: (reward) =>
      h('tr', {}, h('td', {}, reward.id), h('td', {}, reward.externalId ?? '—'), h('td', {}, reward.playerId)),
    cursorQuery: (cursor) => ({ after: cursor }),
  });
  const unapplied = pagedSection({
    id: 'unapplied',
    title: 'Identifiers not cancelled',
    path: `${path}/unapplied`,
    headings: ['Kind', 'Identifier', 'Outcome'],
    rowOf: (entry) => h('tr', {}, h('td', {}, entry.kind), h('td', {}, entry.identifier), h('td', {}, entry.outcome)),
    cursorQuery: (cursor) => ({ afterKind: cursor.kind, afterIdentifier: cursor.identifier }),
  });
  const lists = h('div');
  const loadLists = () => {
    const sections = [rewards];
    if (status.operation === 'bulkCancel') sections.push(unapplied);
    lists.replaceChildren(...sections.map((entry) => entry.section));
    for (const entry of sections) {
      entry.load().catch((error) => entry.section.append(h('p', { role: 'alert' }, error.message)));
    }
  };

  render(status);
  main.replaceChildren(h('h1', {}, 'Job ', h('code', {}, status.jobId)), head, actions, message, lists);
  loadLists();
  if (isFinished(status.state)) return undefined;
  return followJob(status.jobId, (next) => {
    render(next);
    // At its end the job's lists are whole: read them again.
    if (isFinished(next.state)) loadLists();
  });
}
