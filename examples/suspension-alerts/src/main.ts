/**
 * Suspension alerts: watch the three exchanges (one query a minute, the plan's rule) and alert on
 * every new or changed halt; the first snapshot is taken silently.
 *
 *   QUOTEFLOW_BASE_URL=http://127.0.0.1:8080 QUOTEFLOW_TOKEN=demo pnpm start
 */
import { pathToFileURL } from 'node:url';
import { QuoteflowClient, type Exchange, type Plan } from '@quoteflow/core';
import { suspensionWatch } from '@quoteflow/pipelines';

export interface Alert {
  readonly change: 'new' | 'changed' | 'removed';
  readonly exchange: Exchange;
  readonly symbol: string;
  readonly text: string;
}

export interface Options {
  readonly baseUrl: string;
  readonly token: string;
  readonly plan: Plan;
  readonly exchanges?: readonly Exchange[];
  /** Report the first snapshot too (default: only what changes afterwards). */
  readonly emitInitial?: boolean;
  readonly durationMs?: number;
  readonly onAlert?: (alert: Alert) => void;
}

export async function main(o: Options): Promise<Alert[]> {
  const client = new QuoteflowClient({ baseUrl: o.baseUrl, token: o.token, plan: o.plan });
  const alerts: Alert[] = [];
  const watch = suspensionWatch({
    client,
    exchanges: o.exchanges ?? ['sse', 'nyse', 'nasdaq'],
    emitInitial: o.emitInitial ?? false,
    onChange: ({ change, record }) => {
      const halt = record.haltAtMs === undefined ? 'unknown time' : new Date(record.haltAtMs).toISOString();
      const resume =
        record.resumeAtMs === undefined ? 'not announced' : new Date(record.resumeAtMs).toISOString();
      const alert: Alert = {
        change,
        exchange: record.exchange,
        symbol: record.symbol,
        text: `${change.toUpperCase()} ${record.exchange}:${record.symbol} halted ${halt}, resumes ${resume} (${record.haltReason ?? 'no reason given'})`,
      };
      alerts.push(alert);
      (o.onAlert ?? ((a: Alert) => console.log(a.text)))(alert);
    },
  });
  const timer = setTimeout(() => void watch.stop(), o.durationMs ?? 10 * 60_000);
  try {
    await watch.done;
    return alerts;
  } finally {
    clearTimeout(timer);
    await client.close();
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main({
    baseUrl: process.env['QUOTEFLOW_BASE_URL'] ?? 'http://127.0.0.1:8080',
    token: process.env['QUOTEFLOW_TOKEN'] ?? 'demo',
    plan: (process.env['QUOTEFLOW_PLAN'] ?? 'professional') as Plan,
  });
}
