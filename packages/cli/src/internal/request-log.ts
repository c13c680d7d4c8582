import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PlanLimits, RequestRecord } from '@quoteflow/core';

/** Where request logs live beside a dataset (`DIR/_requests/`; Hive readers of `DIR/kline` never look). */
export const REQUEST_LOG_DIR = '_requests';

/**
 * `--request-log`: every request this process sends, one NDJSON line each, in
 * `DIR/_requests/requests-<start>-<pid>.ndjson` beside each dataset, after a first line with the
 * plan's limits (`quoteflow report` draws them). Lines: `{"type":"request","sent":ISO,"endpoint",
 * "attempt","wait_ms","latency_ms","outcome"}`. No token, no URL.
 */
export class RequestLog {
  readonly #streams: WriteStream[];

  private constructor(streams: WriteStream[]) {
    this.#streams = streams;
  }

  static async open(dirs: readonly string[], limits: PlanLimits, startedAtMs: number): Promise<RequestLog> {
    const name = `requests-${new Date(startedAtMs).toISOString().replace(/[:.]/g, '')}-${process.pid}.ndjson`;
    const streams: WriteStream[] = [];
    for (const dir of new Set(dirs)) {
      await mkdir(join(dir, REQUEST_LOG_DIR), { recursive: true });
      streams.push(createWriteStream(join(dir, REQUEST_LOG_DIR, name), { flags: 'a' }));
    }
    const log = new RequestLog(streams);
    log.#write({
      type: 'plan',
      plan: limits.plan,
      started: new Date(startedAtMs).toISOString(),
      per_day: limits.perDay,
      rules: limits.rules.map((r) => ({ id: r.id, scope: r.scope, window_ms: r.windowMs, limit: r.limit })),
    });
    return log;
  }

  /** For the client's `onRequest`. */
  readonly record = (r: RequestRecord): void =>
    this.#write({
      type: 'request',
      sent: new Date(r.sentAtMs).toISOString(),
      endpoint: r.endpoint,
      attempt: r.attempt,
      wait_ms: r.sentAtMs - r.queuedAtMs,
      latency_ms: r.settledAtMs - r.sentAtMs,
      outcome: r.outcome,
    });

  #write(value: object): void {
    const line = `${JSON.stringify(value)}\n`;
    for (const s of this.#streams) s.write(line);
  }

  /** Flushes and closes every file. */
  async close(): Promise<void> {
    await Promise.all(
      this.#streams.map(
        (s) => new Promise<void>((res, rej) => s.end((err?: Error | null) => (err ? rej(err) : res()))),
      ),
    );
  }
}
