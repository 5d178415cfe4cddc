import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// Every alert has a runbook in docs/operations.md: what it means, how to confirm it, what to do.

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8');

const alerts = (
  parse(read('deploy/prometheus/alerts.yml')) as { groups: Array<{ rules: Array<{ alert?: string }> }> }
).groups.flatMap((group) => group.rules.flatMap((rule) => (rule.alert ? [rule.alert] : [])));
const operations = read('docs/operations.md');
const runbooks = operations.slice(operations.indexOf('## Runbooks'), operations.indexOf('## Configuration'));

describe('runbooks', () => {
  it.each(alerts)('%s has a runbook saying what it means, how to confirm it and what to do', (alert) => {
    const start = runbooks.indexOf(`### ${alert}\n`);
    expect(start, alert).toBeGreaterThan(-1);
    const next = runbooks.indexOf('\n### ', start + 1);
    const section = runbooks.slice(start, next === -1 ? undefined : next);
    for (const part of ['**Means**', '**Confirm**', '**Do**']) expect(section, `${alert}: ${part}`).toContain(part);
  });

  it('lists no runbook for an alert that does not exist', () => {
    const headings = [...runbooks.matchAll(/^### (\S+)$/gm)].map((match) => match[1]);
    expect(headings.sort()).toEqual([...alerts].sort());
  });
});
