import type { Column } from './render-table.js';

/**
 * A table whose rows arrive one at a time (a watch): the header and rule come once, before the
 * first row, and every column keeps a fixed width so rows printed minutes apart still line up.
 * A longer value is cut to the width, ending in `…`.
 */
export class StreamingTable<T> {
  #headerShown = false;

  constructor(private readonly columns: readonly (Column<T> & { readonly width: number })[]) {}

  /** The text for one more row: with the header and rule in front the first time. */
  row(row: T): string {
    const lines: string[] = [];
    if (!this.#headerShown) {
      this.#headerShown = true;
      lines.push(this.#line(this.columns.map((c) => c.header)));
      lines.push(this.#line(this.columns.map((c) => '-'.repeat(c.width))));
    }
    lines.push(this.#line(this.columns.map((c) => c.value(row))));
    return `${lines.join('\n')}\n`;
  }

  #line(values: readonly string[]): string {
    return values
      .map((raw, i) => {
        const column = this.columns[i]!;
        const v = raw.length > column.width ? `${raw.slice(0, column.width - 1)}…` : raw;
        return column.align === 'right' ? v.padStart(column.width) : v.padEnd(column.width);
      })
      .join('  ')
      .trimEnd();
  }
}
