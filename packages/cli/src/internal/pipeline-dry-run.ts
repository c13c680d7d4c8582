import { type Plan, type PlanLimitOverrides } from '@quoteflow/core';
import { estimatePlan, formatDuration } from '@quoteflow/core/internal';
import type { PipelineFile, PipelineStep } from './pipeline-file.js';

/**
 * What `quoteflow run --dry-run` prints once the file, its `${ENV}` references, the service
 * options and every output directory have passed their checks: each pipeline with its source,
 * operators and sinks, and for kline pipelines what the plan allows (no request is made).
 */
export function describePipelineFile(
  file: PipelineFile,
  fileName: string,
  plan: Plan,
  limits: PlanLimitOverrides = {},
): string {
  const lines = [
    `${fileName}: valid, ${file.pipelines.length} pipeline${file.pipelines.length === 1 ? '' : 's'} on plan ${plan}` +
      (file.duration === undefined ? ', until stopped' : `, for ${file.duration} s`),
  ];
  file.pipelines.forEach((step, i) => {
    lines.push(
      `  ${step.name ?? `pipelines[${i}]`}: ${describeSource(step)} -> ${describeSinks(step.sinks)}`,
    );
    if ('kline' in step.source) {
      for (const op of (step as Extract<PipelineStep, { operators: unknown }>).operators) {
        const what =
          'resample' in op
            ? `resample to ${typeof op.resample.to === 'number' ? `kline type ${op.resample.to}` : `${op.resample.to.minutes} minutes`} (${op.resample.emit})`
            : 'yesterdayClose';
        lines.push(`    operator ${what} -> ${describeSinks(op.sinks)}`);
      }
      const { codes, klineTypes, bars } = step.source.kline;
      const e = estimatePlan(plan, { codes, klineTypes, bars }, limits);
      lines.push(
        `    plan: backfill ${e.backfill.requests} /kline requests in at least ${formatDuration(e.backfill.durationMs)}, ` +
          `then every series refreshed every ${formatDuration(e.live.refreshPeriodMs)}` +
          (e.fits ? '' : `; does not fit: ${e.reasons.join('; ')}`),
      );
    }
  });
  return `${lines.join('\n')}\n`;
}

function describeSource(step: PipelineStep): string {
  if ('kline' in step.source) {
    const k = step.source.kline;
    return `kline ${k.codes.length} codes × types ${k.klineTypes.join(',')}, ${k.bars} bars`;
  }
  if ('depth' in step.source) return `depth ${step.source.depth.codes.length} codes`;
  return `suspensions ${step.source.suspensions.exchanges.join(',')}`;
}

/** A kafka: block's brokers and login, in words (never its password). */
function kafkaWhere(k: {
  brokers?: string | string[];
  properties?: Record<string, unknown>;
  tls?: unknown;
  sasl?: { mechanism: string; username: string };
}): string {
  const brokers = k.brokers ?? k.properties?.['bootstrap.servers'] ?? '(brokers from configFile)';
  const login = k.sasl === undefined ? '' : ` as ${k.sasl.username} (${k.sasl.mechanism})`;
  return `${String(brokers)}${k.tls === undefined || k.tls === false ? '' : ' over TLS'}${login}`;
}

function describeSinks(sinks: Partial<Record<'files' | 'kafka' | 'stdout', unknown>> | undefined): string {
  const names = Object.entries(sinks ?? {})
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) =>
      k === 'files'
        ? `files ${(v as { out: string }).out}`
        : k === 'kafka'
          ? `kafka ${kafkaWhere(v as { brokers?: string | string[]; properties?: Record<string, unknown>; tls?: unknown; sasl?: { mechanism: string; username: string } })}`
          : 'stdout',
    );
  return names.length === 0 ? 'stdout (changes)' : names.join(', ');
}
