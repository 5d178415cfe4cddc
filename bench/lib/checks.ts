/**
 * Correctness of what was measured: a figure only counts when the work it times was really done
 * (every targeted reward cancelled, counts that match the rows, no request errors). Timing is never
 * a check.
 */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export class Checks {
  readonly all: Check[] = [];

  expect(name: string, ok: boolean, detail: string): boolean {
    this.all.push({ name, ok, detail });
    return ok;
  }

  equal(name: string, actual: unknown, expected: unknown): boolean {
    const ok = actual === expected;
    return this.expect(name, ok, ok ? `${String(actual)}` : `expected ${String(expected)}, got ${String(actual)}`);
  }

  get failed(): Check[] {
    return this.all.filter((check) => !check.ok);
  }
}
