/** One column of a table for people: header, how to read a row, alignment. */
export interface Column<T> {
  readonly header: string;
  readonly value: (row: T) => string;
  readonly align?: 'left' | 'right';
}

/** Rows as an aligned text table with a header and a rule, one line per row, ending in a newline. */
export function renderTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = rows.map((row) => columns.map((c) => c.value(row)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (values: readonly string[]): string =>
    values
      .map((v, i) => (columns[i]?.align === 'right' ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const out = [
    line(columns.map((c) => c.header)),
    line(widths.map((w) => '-'.repeat(w))),
    ...cells.map(line),
  ];
  return `${out.join('\n')}\n`;
}
