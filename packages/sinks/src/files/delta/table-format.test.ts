import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FORMAT_VERSION_PROPERTY, QUOTEFLOW_FORMAT_VERSION } from '../../format-version.js';
import { checkTableFormats } from '../check-table-formats.js';
import { DatasetLog } from '../dataset-log.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'qf-table-format-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const STATS = { numRecords: 1, minValues: {}, maxValues: {}, nullCount: {} };
const commitPath = (v: number): string =>
  join(dir, 'kline', '_delta_log', `${String(v).padStart(20, '0')}.json`);

async function commitOne(log: DatasetLog, i: number): Promise<void> {
  await log.transaction((tx) =>
    tx.commit({
      operation: 'checkpoint',
      add: [{ path: `kline/kline_type=1/part-${i}.parquet`, rows: 1, bytes: 10, stats: STATS }],
      series: { 'A.US|1': { first: i * 60_000, last: i * 60_000, rows: 1 } },
    }),
  );
}

/** The `metaData` actions of version `v`'s commit. */
async function metaDataOf(v: number): Promise<{ configuration: Record<string, string> }[]> {
  return (await readFile(commitPath(v), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { metaData?: { configuration: Record<string, string> } })
    .flatMap((a) => (a.metaData === undefined ? [] : [a.metaData]));
}

/** Rewrites version 0's table properties (a table as another release left it). */
async function setProperties(configuration: Record<string, string>): Promise<void> {
  const lines = (await readFile(commitPath(0), 'utf8')).trim().split('\n');
  const out = lines.map((l) => {
    const a = JSON.parse(l) as { metaData?: Record<string, unknown> };
    return JSON.stringify(a.metaData === undefined ? a : { metaData: { ...a.metaData, configuration } });
  });
  await writeFile(commitPath(0), `${out.join('\n')}\n`);
}

describe('the format version of a table', () => {
  it('is written at creation as the table property quoteflow.formatVersion', async () => {
    await commitOne(await DatasetLog.open(dir, 'kline'), 0);
    expect(await metaDataOf(0)).toMatchObject([
      { configuration: { [FORMAT_VERSION_PROPERTY]: String(QUOTEFLOW_FORMAT_VERSION) } },
    ]);
  });

  it("is raised by this release's first commit to a table of an older format, and only by that one", async () => {
    await commitOne(await DatasetLog.open(dir, 'kline'), 0);
    await setProperties({ 'user.owner': 'desk-7' }); // written before versions were recorded
    const log = await DatasetLog.open(dir, 'kline');
    await commitOne(log, 1);
    await commitOne(log, 2);
    expect(await metaDataOf(1)).toMatchObject([
      {
        configuration: {
          'user.owner': 'desk-7',
          [FORMAT_VERSION_PROPERTY]: String(QUOTEFLOW_FORMAT_VERSION),
        },
      },
    ]);
    expect(await metaDataOf(2)).toEqual([]);
    expect((await DatasetLog.open(dir, 'kline')).files.size).toBe(3);
  });

  it('refuses a table of a newer format at open, naming the table and both versions, writing nothing', async () => {
    await commitOne(await DatasetLog.open(dir, 'kline'), 0);
    const newer = QUOTEFLOW_FORMAT_VERSION + 1;
    await setProperties({ [FORMAT_VERSION_PROPERTY]: String(newer) });
    const refusal = {
      code: 'QF_FORMAT_VERSION',
      message: `the kline table at ${dir} was written in quoteflow format version ${newer}, newer than this release's format version ${QUOTEFLOW_FORMAT_VERSION}: upgrade quoteflow to continue it`,
    };
    await expect(DatasetLog.open(dir, 'kline')).rejects.toMatchObject(refusal);
    await expect(checkTableFormats(dir, ['kline'])).rejects.toMatchObject(refusal);
    await expect(checkTableFormats(dir, ['depth', 'suspension'])).resolves.toBeUndefined();
  });
});
