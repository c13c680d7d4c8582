import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { concat, from, lastValueFrom, NEVER, Subject, throwError, toArray } from 'rxjs';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { bar, barUpdate, suspension, warmEncoderThread } from '../../test-support/test-records.js';
import { writeDataset } from './write-dataset.js';

// The operator does file I/O and completes on a promise, so these tests run in real time against
// real files rather than as marble tests; the writer's rolling logic has its own unit tests.

let dir: string;
beforeAll(warmEncoderThread, 120_000);
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-op-'));
});
afterEach(async () => {
  // A writer unsubscribed early may still be releasing its claim in the background.
  await rm(dir, { recursive: true, force: true, maxRetries: 5 });
});

const T0 = Date.UTC(2026, 0, 5, 1, 30);
const addedToLog = async (sub: string): Promise<string[]> => {
  const log = join(dir, sub, '_delta_log');
  const commits = (await readdir(log).catch(() => [])).filter((f) => f.endsWith('.json'));
  const texts = await Promise.all(commits.map((f) => readFile(join(log, f), 'utf8')));
  return texts.flatMap((t) => t.split('\n')).filter((line) => line.startsWith('{"add"'));
};
/** The data files of a table (not its log's Delta checkpoints, `_delta_log/*.checkpoint.parquet`). */
const files = async (sub: string): Promise<string[]> =>
  (await readdir(join(dir, sub), { recursive: true })).filter(
    (p) => p.endsWith('.parquet') && !p.startsWith('_delta_log'),
  );

describe('writeDataset', () => {
  it('emits every finished file and completes once all rows are on disk', async () => {
    const records = [
      ...Array.from({ length: 5 }, (_, i) => bar('AAPL.US', T0 + i * 60_000)),
      suspension('XYZ'),
    ];
    // The files as written: no upkeep (January 2026 is a closed month, merged whole in the background).
    const out = await lastValueFrom(
      from(records).pipe(writeDataset({ dir, maxRowsPerFile: 2, upkeep: false }), toArray()),
    );
    expect(out.map((f) => `${f.kind}:${f.rows}`).sort()).toEqual([
      'kline:1',
      'kline:2',
      'kline:2',
      'suspension:1',
    ]);
    expect((await files('kline')).length).toBe(3);
  });

  it('completes without a file for an empty source, and skips bars still forming', async () => {
    expect(await lastValueFrom(from([]).pipe(writeDataset({ dir }), toArray()))).toEqual([]);
    const out = await lastValueFrom(
      from([barUpdate('AAPL.US', T0, false)]).pipe(writeDataset({ dir }), toArray()),
    );
    expect(out).toEqual([]);
  });

  it('flushes what arrived before forwarding a source error', async () => {
    const boom = new Error('source failed');
    const err = await lastValueFrom(
      concat(
        from([bar('AAPL.US', T0)]),
        throwError(() => boom),
      ).pipe(writeDataset({ dir, encoderThreads: 0 })),
    ).catch((e: unknown) => e);
    expect(err).toBe(boom);
    expect((await files('kline')).length).toBe(1);
  });

  it('errors with QF_FILE_WRITE when a file cannot be written', async () => {
    await writeFile(join(dir, 'kline'), 'not a directory');
    const err = await lastValueFrom(from([bar('AAPL.US', T0)]).pipe(writeDataset({ dir }))).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ name: 'FileSinkError', code: 'QF_FILE_WRITE' });
  });

  it('still writes the rows it received when unsubscribed early', async () => {
    const source = new Subject<ReturnType<typeof bar>>();
    const next = vi.fn();
    const sub = source.pipe(writeDataset({ dir })).subscribe({ next });
    source.next(bar('AAPL.US', T0));
    source.next(bar('AAPL.US', T0 + 60_000));
    sub.unsubscribe();
    // Committed and published (the writer closes in the background): the table's log adds the
    // file, then the file is renamed into place.
    await vi.waitFor(
      async () => {
        expect(await addedToLog('kline')).toHaveLength(1);
        expect(await files('kline')).toHaveLength(1);
      },
      { timeout: 10_000 },
    );
    expect(next).not.toHaveBeenCalled();
  });

  it('gives each subscription its own writer and files', async () => {
    // Two series: two live writers of one series are refused by the table's claims (QF_OWNED).
    // Their files as written (upkeep would add a Delta checkpoint beside them).
    const write = writeDataset({ dir, upkeep: false });
    const [a, b] = await Promise.all(
      ['AAPL.US', '700.HK'].map((code) => lastValueFrom(from([bar(code, T0)]).pipe(write, toArray()))),
    );
    expect(a?.[0]?.path).not.toBe(b?.[0]?.path);
    expect((await files('kline')).length).toBe(2);
  });

  it('emits nothing and writes nothing for a source that never emits', async () => {
    const next = vi.fn();
    const sub = NEVER.pipe(writeDataset({ dir })).subscribe({ next });
    sub.unsubscribe();
    await new Promise((r) => setImmediate(r));
    expect(next).not.toHaveBeenCalled();
    expect(await readdir(dir)).toEqual([]);
  });
});
