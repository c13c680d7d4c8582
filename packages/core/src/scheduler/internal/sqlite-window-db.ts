import { createRequire } from 'node:module';
import type * as NodeSqlite from 'node:sqlite';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { MachineTime } from './machine-time.js';

/**
 * The schema. Instants are machine-wide monotonic ms (see `MachineTime`), so every process reads
 * them alike. `starts.owner` is set while a settle-anchored start is in flight (its `at` is then
 * the instant it counts as arrived at the latest: its in-flight bound) and NULL once settled.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS starts (id INTEGER PRIMARY KEY, key TEXT NOT NULL, at REAL NOT NULL, owner TEXT);
CREATE INDEX IF NOT EXISTS starts_by_key_at ON starts (key, at);
CREATE TABLE IF NOT EXISTS buckets (key TEXT PRIMARY KEY, count INTEGER NOT NULL, ends_at REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS slots (
  key TEXT NOT NULL, ends_at REAL NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (key, ends_at)
) WITHOUT ROWID;
`;

/** The prepared statements of one connection. */
export interface WindowStatements {
  /** Starts of a key after an instant, newest first: requests in flight, and anything settled later. */
  readonly startsAfter: StatementSync;
  /** The at of the (offset + 1)-th newest start of a key at or before an instant. */
  readonly nthStartAtOrBefore: StatementSync;
  readonly countStartsAfter: StatementSync;
  readonly insertStart: StatementSync;
  readonly settleStart: StatementSync;
  readonly pruneStarts: StatementSync;
  readonly bucket: StatementSync;
  readonly addToBucket: StatementSync;
  readonly pruneBuckets: StatementSync;
  readonly slotTotalAfter: StatementSync;
  readonly slotsAfter: StatementSync;
  readonly addToSlot: StatementSync;
  readonly pruneSlots: StatementSync;
}

/** node:sqlite, loaded on first use: importing core must not need it (Node 22 before 22.13 flags it). */
function loadSqlite(): typeof NodeSqlite {
  return createRequire(import.meta.url)('node:sqlite') as typeof NodeSqlite;
}

/**
 * Opens (creating when needed) the database at `path`: WAL, so readers never wait for the writer
 * and a commit does not fsync (`synchronous = NORMAL`: a power cut may lose the last starts, a
 * crashed process loses nothing); a busy timeout, so a writer waits for another process's short
 * transaction instead of failing.
 */
export function openWindowDb(path: string, busyTimeoutMs: number): DatabaseSync {
  const { DatabaseSync } = loadSqlite();
  const db = new DatabaseSync(path, { timeout: busyTimeoutMs });
  try {
    db.exec(`PRAGMA busy_timeout = ${Math.round(busyTimeoutMs)}`);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec(SCHEMA);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

export function prepareWindowStatements(db: DatabaseSync): WindowStatements {
  const p = (sql: string) => db.prepare(sql);
  return {
    startsAfter: p('SELECT id, at, owner FROM starts WHERE key = ? AND at > ? ORDER BY at DESC'),
    nthStartAtOrBefore: p(
      'SELECT at FROM starts WHERE key = ? AND at <= ? ORDER BY at DESC LIMIT 1 OFFSET ?',
    ),
    countStartsAfter: p('SELECT count(*) AS n FROM starts WHERE key = ? AND at > ?'),
    insertStart: p('INSERT INTO starts (key, at, owner) VALUES (?, ?, ?)'),
    settleStart: p('UPDATE starts SET at = ?, owner = NULL WHERE id = ? AND owner = ?'),
    pruneStarts: p('DELETE FROM starts WHERE key = ? AND at <= ?'),
    bucket: p('SELECT count, ends_at FROM buckets WHERE key = ?'),
    addToBucket: p(
      'INSERT INTO buckets (key, count, ends_at) VALUES (?, 1, ?) ON CONFLICT (key) DO UPDATE SET count = count + 1',
    ),
    pruneBuckets: p('DELETE FROM buckets WHERE ends_at <= ?'),
    slotTotalAfter: p('SELECT total(count) AS n FROM slots WHERE key = ? AND ends_at > ?'),
    slotsAfter: p('SELECT ends_at, count FROM slots WHERE key = ? AND ends_at > ? ORDER BY ends_at'),
    addToSlot: p(
      'INSERT INTO slots (key, ends_at, count) VALUES (?, ?, 1) ON CONFLICT (key, ends_at) DO UPDATE SET count = count + 1',
    ),
    pruneSlots: p('DELETE FROM slots WHERE key = ? AND ends_at <= ?'),
  };
}

/** Runs `body` in one `BEGIN IMMEDIATE` transaction (the write lock taken up front: no upgrade deadlock). */
export function immediate<T>(db: DatabaseSync, body: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = body();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}

/**
 * Monotonic instants of another boot mean nothing in this one: after a reboot, shifts every stored
 * instant by the change of (clock - monotonic) between the boots, so it keeps its wall-clock time
 * (the windows of the day survive a reboot; requests in flight at the reboot expire by their bound).
 */
export function reanchorAfterReboot(db: DatabaseSync, time: MachineTime): void {
  immediate(db, () => {
    const read = (name: string) =>
      (db.prepare('SELECT value FROM meta WHERE name = ?').get(name) as { value: string } | undefined)?.value;
    const write = (name: string, value: string) =>
      db
        .prepare(
          'INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
        )
        .run(name, value);
    const bootId = time.bootId();
    const offsetMs = time.clockMs() - time.monotonicMs();
    const storedBoot = read('boot_id');
    const storedOffset = Number(read('clock_minus_monotonic_ms'));
    if (storedBoot !== undefined && storedBoot !== bootId && Number.isFinite(storedOffset)) {
      const shiftMs = storedOffset - offsetMs;
      db.prepare('UPDATE starts SET at = at + ?').run(shiftMs);
      db.prepare('UPDATE buckets SET ends_at = ends_at + ?').run(shiftMs);
      db.prepare('UPDATE slots SET ends_at = ends_at + ?').run(shiftMs);
    }
    write('boot_id', bootId);
    write('clock_minus_monotonic_ms', String(offsetMs));
  });
}

/**
 * Deletes the entries that lie further ahead than `horizonMs` of monotonic `nowMs`: no window of a
 * plan ends that far ahead (a day, its longest, plus the in-flight bound), so such an entry was
 * written under another clock (a state directory copied from another machine or restored from a
 * backup, a clock that jumped) and would hold every start for days. Returns how many went.
 */
export function dropImpossibleFuture(db: DatabaseSync, nowMs: number, horizonMs: number): number {
  const limit = nowMs + horizonMs;
  return immediate(db, () => {
    let dropped = 0;
    dropped += Number(db.prepare('DELETE FROM starts WHERE at > ?').run(limit).changes);
    dropped += Number(db.prepare('DELETE FROM buckets WHERE ends_at > ?').run(limit).changes);
    dropped += Number(db.prepare('DELETE FROM slots WHERE ends_at > ?').run(limit).changes);
    return dropped;
  });
}

/** Whether `error` is SQLite's "database is busy/locked" after the busy timeout. */
export function isBusy(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  // SQLITE_BUSY (5) and SQLITE_LOCKED (6), with their extended codes in the upper bits.
  return typeof errcode === 'number' && ((errcode & 0xff) === 5 || (errcode & 0xff) === 6);
}
