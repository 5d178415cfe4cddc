import { readFileSync } from 'node:fs';

/**
 * `npx tsx bench/profile-summary.ts FILE.cpuprofile [top]`: where a process spent its CPU, from a
 * profile written by `npm run bench -- --profile` (node --cpu-prof). Self time by package (or Node's
 * own code, the garbage collector, idle) and by function: enough to see which layer a request's time
 * goes to, before opening the profile in Chrome DevTools for the call trees.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [path, topArgument] = process.argv.slice(2);
if (!path) {
  process.stderr.write('usage: npx tsx bench/profile-summary.ts FILE.cpuprofile [top]\n');
  process.exit(2);
}
const top = Number(topArgument ?? 25);
const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));

const byPackage = new Map<string, number>();
const byFunction = new Map<string, number>();
let totalMicros = 0;
profile.samples.forEach((nodeId, index) => {
  const node = nodes.get(nodeId);
  const micros = profile.timeDeltas[index] ?? 0;
  if (!node) return;
  totalMicros += micros;
  const url = shortUrl(node.callFrame.url);
  add(byPackage, packageOf(url, node.callFrame.functionName), micros);
  add(byFunction, `${node.callFrame.functionName || '(anonymous)'} ${url}:${node.callFrame.lineNumber + 1}`, micros);
});

process.stdout.write(`${path}: ${(totalMicros / 1e6).toFixed(1)} s sampled\n\nself time by package\n`);
print(byPackage);
process.stdout.write('\nself time by function\n');
print(byFunction);

function add(totals: Map<string, number>, key: string, micros: number): void {
  totals.set(key, (totals.get(key) ?? 0) + micros);
}

function shortUrl(url: string): string {
  return url.replace(/^.*node_modules\//, 'npm:').replace(/^file:\/\/.*?\/dist\//, 'dist/');
}

/** An npm package, the project's own file, Node's own code, or what V8 names a sample without code (GC, idle). */
function packageOf(url: string, functionName: string): string {
  const npm = /^npm:((@[^/]+\/)?[^/]+)/.exec(url);
  if (npm?.[1]) return npm[1];
  if (url.startsWith('node:')) return 'node (JavaScript)';
  return url || functionName;
}

function print(totals: Map<string, number>): void {
  for (const [key, micros] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${((100 * micros) / totalMicros).toFixed(1).padStart(6)} %  ${key}\n`);
  }
}
