/**
 * The layer rule (`npm run lint:layers`, run by .ci/run): the API and the workers are two sides that
 * never reach into each other, and src/shared holds only what they share, so it imports neither. seed/
 * and tools/ may use the API's and shared code. Type-only imports count: a type pulled across a layer
 * ties the layers together as much as a value does, and a circle of types is still a circle to read.
 */
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
      name: 'shared-not-to-sides',
      comment: 'src/shared holds what two or more sides use, so it imports neither src/api nor src/worker.',
      severity: 'error',
      from: { path: '^src/shared/' },
      to: { path: '^src/(api|worker)/' },
    },
    {
      name: 'no-circular',
      comment: 'No import circles in src: each module can be read after the ones it imports.',
      severity: 'error',
      from: { path: '^src/' },
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
