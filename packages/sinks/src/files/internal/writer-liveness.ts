import { monotonicClock } from '@quoteflow/core/internal';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type { TableWriter } from '../table-writer.js';
import { isProcessAlive } from './staging.js';

/**
 * How far two machines' wall clocks may disagree before a claim's own renewal time (by its
 * writer's clock) is taken to say it was abandoned: only a renewal older than its lease and this
 * by this machine's clock counts at first sight (see {@link writerVerdict}).
 */
export const CLOCK_TOLERANCE_MS = 120_000;

const HOST = hostname();

/** The machine part of a process start (boot id and pid namespace), or undefined off Linux. */
function machineOf(): string | undefined {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const ns = readlinkSync('/proc/self/ns/pid');
    return `${boot}/${ns}`;
  } catch {
    return undefined;
  }
}
const MACHINE = machineOf();

/** A process of this machine: its start tick, `'gone'` (no such process, or a zombie), or unknown. */
function startTickOf(pid: number): string | 'gone' | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : undefined;
  }
  // `pid (comm) state …`: comm may hold spaces and parentheses, so fields count from the last `)`;
  // field 3 is the state, field 22 the start time in clock ticks since boot.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return 'gone';
  return fields[19];
}

let self: { host: string; pid: number; started?: string } | undefined;

/** This process as its claims record it: host, pid and (on Linux) when it started. */
export function thisProcess(): { host: string; pid: number; started?: string } {
  if (self === undefined) {
    const tick = MACHINE === undefined ? undefined : startTickOf(process.pid);
    self = {
      host: HOST,
      pid: process.pid,
      ...(tick === undefined || tick === 'gone' ? {} : { started: `${MACHINE}/${tick}` }),
    };
  }
  return self;
}

/**
 * Whether a writer's process still runs, where this process can tell: `'alive'` or `'dead'` on the
 * same machine (same host name and, on Linux, the same boot and pid namespace; a pid reused by a
 * later process counts as dead), `'unknown'` on another machine (or another container).
 */
export function processState(w: Pick<TableWriter, 'host' | 'pid' | 'started'>): 'alive' | 'dead' | 'unknown' {
  if (w.host !== HOST) return 'unknown';
  if (w.started !== undefined && MACHINE !== undefined) {
    const cut = w.started.lastIndexOf('/');
    if (w.started.slice(0, cut) !== MACHINE) return 'unknown';
    const tick = startTickOf(w.pid);
    if (tick === 'gone') return 'dead';
    if (tick !== undefined) return tick === w.started.slice(cut + 1) ? 'alive' : 'dead';
  }
  return isProcessAlive(w.pid) ? 'alive' : 'dead';
}

/**
 * Per writer id, the renewal this process saw last and when it first saw it (monotonic ms): a
 * fact about that writer, shared by every table and log instance of the process, so a wait begun
 * by one (the CLI's check before any request) is not begun again by the next (the sink's claim).
 */
const seen = new Map<string, { renewal: number; atMs: number }>();

/** Whether another writer holds its claims still, and if not, why. */
export type WriterVerdict = { readonly live: true } | { readonly live: false; readonly why: string };

/**
 * Judges a writer that owns series this one claims. On the same machine its process decides at
 * once. Elsewhere its lease does, measured on this process's monotonic clock: the writer is gone
 * once its renewal count has not advanced for `leaseMs` since this process first saw that count.
 * Wall clocks of two machines are not comparable, except for a claim abandoned long ago: at first
 * sight a renewal whose own time is older than {@link CLOCK_TOLERANCE_MS} by this machine's clock
 * counts as that much older, so a writer that died hours ago is not waited for a whole lease. A
 * wrong verdict costs liveness only: a takeover is a commit, and the log refuses the next commit
 * of the writer taken over.
 */
export function writerVerdict(
  w: TableWriter,
  nowMs = monotonicClock.now(),
  wallNowMs = Date.now(),
): WriterVerdict {
  const state = processState(w);
  if (state === 'dead') return { live: false, why: 'its process is gone' };
  if (state === 'alive') return { live: true };
  let s = seen.get(w.id);
  if (s === undefined || s.renewal !== w.renewal) {
    const abandonedMs = s === undefined ? wallNowMs - w.renewedMs - CLOCK_TOLERANCE_MS : 0;
    s = { renewal: w.renewal, atMs: nowMs - Math.max(0, Math.min(abandonedMs, w.leaseMs)) };
    seen.set(w.id, s);
  }
  return nowMs - s.atMs >= w.leaseMs ? { live: false, why: 'its lease ran out' } : { live: true };
}
