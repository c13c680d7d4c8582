import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One row of an NDJSON kline dataset, as the cluster tests compare them. */
export interface NdjsonKlineRow {
  readonly code: string;
  /** From the row's `kline_type=K` directory. */
  readonly klineType: number;
  /** The row's `ts`, in ms. */
  readonly tsMs: number;
}

/** Every row of the NDJSON files under `dir/kline` (none when it does not exist yet). */
export async function ndjsonKlineRows(dir: string): Promise<NdjsonKlineRow[]> {
  const rows: NdjsonKlineRow[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith('.ndjson')) {
        const klineType = Number(/kline_type=(\d+)/.exec(p)![1]);
        for (const line of (await readFile(p, 'utf8')).split('\n')) {
          if (line === '') continue;
          const row = JSON.parse(line) as { code: string; ts: string };
          rows.push({ code: row.code, klineType, tsMs: Date.parse(row.ts) });
        }
      }
    }
  };
  await walk(join(dir, 'kline')).catch((error: unknown) => {
    if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
  });
  return rows;
}
