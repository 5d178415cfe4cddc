/**
 * The layer rule (`npm run lint:layers`, run by .ci/run), for the shape of docs/design.md §1:
 *
 *   src/api, src/worker   two sides that never reach into each other; each is its wiring (entry point,
 *                         dependencies, routes or workers) over its feature folders over its own plumbing
 *   src/shared            what both sides use: the ground floor (config, db, redis, telemetry, errors,
 *                         cache, process, secrets) under the features both sides share (jobs,
 *                         cancellations, webhooks)
 *   src/tools             command-line entry points (and the seed), which may use everything else
 *
 * Nothing imports upward: not a side's wiring from its features, not a feature from the ground floor,
 * not a side or a tool from src/shared. Type-only imports count: a type pulled across a layer ties the
 * layers together as much as a value does, and a circle of types is still a circle to read.
 */
const FEATURES = 'cancellations|jobs|reward-configurations|bet-slip|webhooks|merchants';
const API_FOLDERS = `${FEATURES}|portal|operations|http|auth|limits|reads|library-bypasses`;
const API_WIRING = 'index|app|api-deps|context|routes|http-server';
const WORKER_FOLDERS = `${FEATURES}|retention`;
const WORKER_WIRING = 'index|workers|worker-deps|worker-context|health-server|database-gate';
const GROUND_FLOOR = 'config|db|redis|telemetry|errors|cache|process|secrets';
const SHARED_FEATURES = 'jobs|cancellations|webhooks';

module.exports = {
  forbidden: [
    {
      name: 'api-not-to-worker',
      comment: 'src/api must not import src/worker: the two sides meet only through src/shared (queues, keys, repositories).',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/worker/' },
    },
    {
      name: 'worker-not-to-api',
      comment: 'src/worker must not import src/api: the two sides meet only through src/shared.',
      severity: 'error',
      from: { path: '^src/worker/' },
      to: { path: '^src/api/' },
    },
    {
      name: 'shared-not-upward',
      comment: 'src/shared lies under both sides and the tools, so it imports none of them.',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: '^src/(api|worker|tools)/' },
    },
    {
      name: 'sides-not-to-tools',
      comment: 'The command-line tools use the sides, never the reverse: a process must not load a tool.',
      severity: 'error',
      from: { path: '^src/(api|worker)/' },
      to: { path: '^src/tools/' },
    },
    {
      name: 'ground-floor-not-to-features',
      comment: `The ground floor of src/shared (${GROUND_FLOOR}) knows no feature: features are built on it.`,
      severity: 'error',
      from: { path: `^src/shared/(${GROUND_FLOOR})/` },
      to: { path: `^src/shared/(${SHARED_FEATURES})/` },
    },
    {
      name: 'features-not-to-wiring',
      comment:
        "A feature folder never imports its side's wiring (entry point, dependencies, the route or worker list). " +
        'operations/ is the exception: it describes the whole API (its OpenAPI documents are built from the route list).',
      severity: 'error',
      from: { path: `^src/(api|worker)/[^/]+/`, pathNot: '^src/api/operations/' },
      to: { path: `^src/(api/(${API_WIRING})|worker/(${WORKER_WIRING}))\\.ts$`, pathNot: '^src/(api/context|worker/worker-context)\\.ts$' },
    },
    {
      name: 'plumbing-not-to-features',
      comment: "The API's plumbing (http, auth, limits, reads) serves every feature, so it imports none of them.",
      severity: 'error',
      from: { path: '^src/api/(http|auth|limits|reads)/' },
      to: { path: `^src/api/(${FEATURES}|portal|operations)/` },
    },
    {
      name: 'api-files-in-known-folders',
      comment: `A file of src/api is wiring (${API_WIRING}) or lives in a folder of its own: ${API_FOLDERS}.`,
      severity: 'error',
      from: { path: '^src/api/', pathNot: `^src/api/((${API_WIRING})\\.ts$|(${API_FOLDERS})/)` },
      to: {},
    },
    {
      name: 'worker-files-in-known-folders',
      comment: `A file of src/worker is wiring (${WORKER_WIRING}) or lives in a folder of its own: ${WORKER_FOLDERS}.`,
      severity: 'error',
      from: { path: '^src/worker/', pathNot: `^src/worker/((${WORKER_WIRING})\\.ts$|(${WORKER_FOLDERS})/)` },
      to: {},
    },
    {
      name: 'shared-files-in-known-folders',
      comment: `A file of src/shared lives on the ground floor (${GROUND_FLOOR}) or in a shared feature (${SHARED_FEATURES}).`,
      severity: 'error',
      from: { path: '^src/shared/', pathNot: `^src/shared/(${GROUND_FLOOR}|${SHARED_FEATURES})/|^src/shared/wire-rules\\.ts$` },
      to: {},
    },
    {
      name: 'shared-feature-used-by-api',
      comment: 'A shared feature file the API never loads belongs to the worker (src/shared holds only what both sides use).',
      severity: 'error',
      from: { path: '^src/api/index\\.ts$' },
      to: { path: `^src/shared/(${SHARED_FEATURES})/`, reachable: false },
    },
    {
      name: 'shared-feature-used-by-worker',
      comment: 'A shared feature file the worker never loads belongs to the API (src/shared holds only what both sides use).',
      severity: 'error',
      from: { path: '^src/worker/index\\.ts$' },
      to: { path: `^src/shared/(${SHARED_FEATURES})/`, reachable: false },
    },
    {
      name: 'no-circular',
      comment: 'No import circles in src, bench or test: each module can be read after the ones it imports.',
      severity: 'error',
      from: { path: '^(src|bench|test)/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
  },
};
