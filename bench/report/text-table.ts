/** A plain-text table: columns padded to their widest cell, ` | ` between them, a rule under the header. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const format = (row: readonly string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join(' | ')
      .trimEnd();
  return [format(header), widths.map((width) => '-'.repeat(width)).join('-|-'), ...rows.map(format)];
}

export const count = (value: number | null) => (value === null ? 'n/a' : value.toLocaleString('en'));
export const ms = (value: number | null) => (value === null ? 'n/a' : `${value.toLocaleString('en')} ms`);
export const times = (value: number | null) => (value === null ? 'n/a' : `${value}×`);
export const bytes = (value: number | null) => (value === null ? 'n/a' : `${value.toLocaleString('en')} bytes`);
export const micros = (value: number | null) => (value === null ? 'n/a' : `${value} µs`);
/** A share as ± per cent, e.g. 0.034 → `±3.4 %`. */
export const band = (value: number | null) => (value === null ? 'n/a' : `±${Math.round(value * 1000) / 10} %`);
