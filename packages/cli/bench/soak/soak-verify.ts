// The soak's final check, by readers quoteflow did not write: the kline table read by delta-rs and
// the kline topic read `read_committed` by kcat each hold every closed bar of the week once, with
// the market's values; and the freshness of each bar (from its close to when its final values were
// read, the table's `read_at`).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { SoakSim } from './soak-sim-client.js';

const REPO = new URL('../../../..', import.meta.url).pathname;

/** One row of the kline table. */
export interface HeldBar {
  readonly code: string;
  readonly klineType: number;
  readonly tsMs: number;
  readonly close: number;
  readonly readAtMs: number;
}

/** Streams the lines `command` prints to `onLine`; rejects on a non-zero exit. */
async function eachLine(
  command: string,
  args: readonly string[],
  onLine: (line: string) => void,
  env?: NodeJS.ProcessEnv,
): Promise<void> {
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(env === undefined ? {} : { env }),
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4_000)));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  for await (const line of createInterface({ input: child.stdout, crlfDelay: Infinity })) onLine(line);
  const code = await exited;
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr}`);
}

/** The kline table's rows at its newest version, read by delta-rs (scripts/python/soak_read_kline.py). */
export async function readKlineTable(
  out: string,
): Promise<{ bars: HeldBar[]; version: number; files: number }> {
  const bars: HeldBar[] = [];
  let version = -1;
  let files = 0;
  await eachLine(
    join(REPO, '.venv', 'bin', 'python'),
    [join(REPO, 'scripts', 'python', 'soak_read_kline.py'), join(out, 'kline')],
    (line) => {
      if (line.startsWith('#version')) {
        const [, v, , f] = line.split(' ');
        version = Number(v);
        files = Number(f);
        return;
      }
      const [code, kt, ts, close, readAt] = line.split('\t');
      bars.push({
        code: code!,
        klineType: Number(kt),
        tsMs: Number(ts),
        close: Number(close),
        readAtMs: Number(readAt),
      });
    },
  );
  return { bars, version, files };
}

/** The final bars on `topic` as kcat reads it `read_committed` (forming updates skipped). */
export async function readKafkaFinals(
  brokers: string,
  topic: string,
): Promise<{ finals: HeldBar[]; records: number }> {
  const finals: HeldBar[] = [];
  let records = 0;
  const args = [
    '-C',
    '-b',
    brokers,
    '-t',
    topic,
    '-X',
    'isolation.level=read_committed',
    '-f',
    '%s\\n',
    '-e',
    '-q',
    '-o',
    'beginning',
  ];
  await eachLine('kcat', args, (line) => {
    records++;
    if (!line.includes('"final":true')) return;
    const v = JSON.parse(line) as Record<string, unknown>;
    finals.push({
      code: String(v['code']),
      klineType: Number(v['kline_type']),
      tsMs: Date.parse(String(v['ts'])),
      close: Number(v['close']),
      readAtMs: Date.parse(String(v['read_at'])),
    });
  });
  return { finals, records };
}

/** What one reader holds against the market, summed over every series. */
export interface OnceCheck {
  readonly reader: string;
  /** Closed bars the market has in the checked window (every series). */
  readonly expected: number;
  /** Of those, held exactly once with the market's close. */
  readonly once: number;
  readonly missing: number;
  /** Bars held more than once (each extra copy counted). */
  readonly duplicates: number;
  /** Bars held with another close than the market's, or that the market does not have. */
  readonly wrong: number;
  /** A few examples of what went wrong, for the report. */
  readonly examples: readonly string[];
}

const key = (code: string, klineType: number): string => `${code}\u0000${klineType}`;

/** `bars` grouped by series. */
function bySeries(bars: readonly HeldBar[]): Map<string, HeldBar[]> {
  const out = new Map<string, HeldBar[]>();
  for (const b of bars) {
    const k = key(b.code, b.klineType);
    let list = out.get(k);
    if (list === undefined) out.set(k, (list = []));
    list.push(b);
  }
  return out;
}

/**
 * Each series' bars that closed in [fromMs, completeToMs] (the market's bars as of `completeToMs`)
 * must be held once with the market's close (missing, duplicated or wrong ones are counted); bars
 * that closed later (the last minutes before the stop, which may or may not have been read) are
 * checked for duplicates and values only, against the market as of `nowMs`.
 */
export async function checkOnce(
  reader: string,
  held: readonly HeldBar[],
  series: readonly { code: string; klineType: number }[],
  sim: SoakSim,
  window: { fromMs: number; completeToMs: number; nowMs: number },
): Promise<OnceCheck> {
  const grouped = bySeries(held.filter((b) => b.tsMs >= window.fromMs));
  let expected = 0;
  let once = 0;
  let missing = 0;
  let duplicates = 0;
  let wrong = 0;
  const examples: string[] = [];
  const note = (what: string): void => void (examples.length < 8 && examples.push(what));
  const at = (ts: number): string => new Date(ts).toISOString();
  for (const s of series) {
    const name = `${reader} ${s.code}:${s.klineType}`;
    const mine = grouped.get(key(s.code, s.klineType)) ?? [];
    const closed = await sim.bars(
      s.code,
      s.klineType,
      window.fromMs,
      window.completeToMs,
      window.completeToMs,
    );
    const market = new Map(await sim.bars(s.code, s.klineType, window.fromMs, window.nowMs, window.nowMs));
    const seen = new Map<number, number>();
    for (const b of mine) {
      seen.set(b.tsMs, (seen.get(b.tsMs) ?? 0) + 1);
      const close = market.get(b.tsMs);
      if (close === undefined || Math.abs(close - b.close) > 1e-9 * Math.max(1, Math.abs(close))) {
        wrong++;
        note(`${name} ${at(b.tsMs)}: close ${b.close}, market ${close}`);
      }
    }
    for (const [ts, n] of seen)
      if (n > 1) {
        duplicates += n - 1;
        note(`${name} ${at(ts)}: ${n} times`);
      }
    for (const [ts] of closed) {
      expected++;
      const n = seen.get(ts) ?? 0;
      if (n === 0) {
        missing++;
        note(`${name} ${at(ts)}: missing`);
      } else if (n === 1) once++;
    }
  }
  return { reader, expected, once, missing, duplicates, wrong, examples };
}
