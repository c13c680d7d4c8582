import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { CommandContext } from '../command-context.js';
import type { PipelineFile } from '../internal/pipeline-file.js';
import { checkOutDir } from '../internal/check-out-dir.js';
import {
  addServiceOptions,
  resolveServiceOptions,
  type ServiceOptions,
} from '../internal/service-options.js';
import { intAtLeast } from '../internal/parse-args.js';
import { toJson } from '../internal/to-json.js';
import { UsageError } from '../internal/usage-error.js';
import { WAIT_FOR_WRITER_HELP } from '../internal/wait-for-writer-option.js';

interface RunFlags {
  baseUrl?: string;
  token?: string;
  plan?: string;
  dryRun?: boolean;
  schema?: boolean;
  requestLog?: boolean;
  metricsPort?: number;
  waitForWriter?: boolean;
  exitWhenBudgetSpent?: boolean;
  limit?: string[];
}

/** The pipeline file `run --help` shows. */
export const RUN_HELP_EXAMPLE = `version: 1
service: { plan: professional }
duration: 60
pipelines:
  - source: { kline: { codes: [BTCUSDT, AAPL.US], klineTypes: [1], bars: 100 } }
    sinks: { files: { out: ./data } }
    state: ./data/state.json
  - source: { kline: { codes: [ETHUSDT], klineTypes: [1] } }
    sinks: { stdout: { finalOnly: true } }
    operators:
      - resample: { to: { minutes: 15 } }
        sinks: { stdout: {} }
  - source: { suspensions: { exchanges: [nyse] } }
`;

/** `quoteflow run PIPELINE.yaml`: declarative pipelines, validated before anything starts. */
export function registerRunCommand(program: Command, ctx: CommandContext): void {
  const cmd = program
    .command('run')
    .summary('run a declarative pipeline file (YAML)')
    .description(
      'Runs the pipelines of a YAML file: each has one source (kline: sync; depth: capture; suspensions: watch) and ' +
        'sinks (files: {out, format}; kafka: {brokers, topicPrefix, tls, sasl, createTopics, topics, properties, configFile, schemaRegistry}; stdout: NDJSON lines, kline with {finalOnly}). ' +
        'A kline pipeline may add operators, each with its own stdout sink and no request of its own: ' +
        'resample: {to: K | {minutes: N}, emit: final|all} and yesterdayClose: {} (needs kline type 8; the previous close as of now, once the history is read, then each change). ' +
        'Values may be ${NAME} or ${NAME:default}, filled from the environment ($${ for a literal ${). ' +
        'The file is validated first; an error names the file, line and field. The token comes from --token, ' +
        'QUOTEFLOW_TOKEN, or the variable named by service.tokenEnv, never from the file. Runs until `duration` ' +
        'seconds pass or SIGINT/SIGTERM. More in examples/pipelines/.',
    )
    // After the options and unwrapped (a description is wrapped to the terminal): copy it as it is.
    .addHelpText(
      'after',
      `\nExample (save as pipeline.yaml; test/cli-pipeline-files.test.ts runs it):\n\n${RUN_HELP_EXAMPLE}`,
    )
    .argument('[pipeline.yaml]', 'pipeline file')
    .option('--schema', "print the pipeline file's JSON Schema (for editors and linters) and exit")
    .option(
      '--request-log',
      "log every request into each files sink's DIR/_requests/ (quoteflow report draws it)",
    )
    .option(
      '--metrics-port <port>',
      "serve Prometheus metrics on 127.0.0.1:PORT (over the file's metricsPort; 0: any free port)",
      intAtLeast(0),
    )
    .option('--wait-for-writer', `${WAIT_FOR_WRITER_HELP}; for every files sink (as files.waitForWriter)`)
    .option(
      '--dry-run',
      'check the file, its ${ENV} references, the service options and every output directory, print what would run, and exit (no request, no file)',
    );
  addServiceOptions(cmd).action(async (file: string | undefined, flags: RunFlags) => {
    // Command implementations load here, not at start: `quoteflow --help` must not pay for them.
    const { loadPipelineFile, pipelineFileJsonSchema } = await import('../internal/pipeline-file.js');
    if (flags.schema === true) {
      ctx.out(`${toJson(pipelineFileJsonSchema(), 2)}\n`);
      return;
    }
    if (file === undefined) throw new UsageError('a pipeline file is required: quoteflow run PIPELINE.yaml');
    const spec = await loadPipelineFile(resolve(ctx.io.cwd, file), ctx.io.env);
    const service = await pipelineService(ctx, spec, flags);
    for (const [i, step] of spec.pipelines.entries()) {
      const out = step.sinks?.files?.out;
      const dataset = 'kline' in step.source ? 'kline' : 'depth' in step.source ? 'depth' : 'suspension';
      if (out !== undefined) await checkOutDir(out, ctx.io.cwd, `pipelines[${i}].sinks.files.out`, [dataset]);
    }
    if (flags.dryRun === true) {
      const { describePipelineFile } = await import('../internal/pipeline-dry-run.js');
      ctx.out(describePipelineFile(spec, file, service.plan, service.limits));
      return;
    }
    const { runPipelineFile } = await import('../internal/run-pipeline-file.js');
    await runPipelineFile(ctx, spec, service, {
      requestLog: flags.requestLog === true,
      metricsPort: flags.metricsPort,
      waitForWriter: flags.waitForWriter === true,
    });
  });
}

/** The file's service settings under the flags and the environment; the file's limits only tighten. */
async function pipelineService(
  ctx: CommandContext,
  spec: PipelineFile,
  flags: RunFlags,
): Promise<ServiceOptions> {
  const tokenEnv = spec.service.tokenEnv;
  const token = flags.token ?? (tokenEnv === undefined ? undefined : ctx.io.env[tokenEnv]);
  if (token !== undefined) ctx.redactor.add(token);
  if (tokenEnv !== undefined && token === undefined && ctx.io.env['QUOTEFLOW_TOKEN'] === undefined) {
    throw new UsageError(`service.tokenEnv names ${tokenEnv}, which is not set`);
  }
  const baseUrl = flags.baseUrl ?? spec.service.baseUrl;
  const plan = flags.plan ?? spec.service.plan;
  const resolved = await resolveServiceOptions(
    {
      ...(baseUrl === undefined ? {} : { baseUrl }),
      ...(token === undefined ? {} : { token }),
      ...(plan === undefined ? {} : { plan }),
      ...(flags.exitWhenBudgetSpent === undefined ? {} : { exitWhenBudgetSpent: flags.exitWhenBudgetSpent }),
      ...(flags.limit === undefined ? {} : { limit: flags.limit }),
    },
    ctx.io.env,
  );
  // The file's limits, then QUOTEFLOW_LIMITS and --limit on top; each only tighter than the plan.
  const { checkLimitOverrides, mergeLimitOverrides, parseLimitOverrides } =
    await import('../internal/limit-overrides.js');
  const fileLimits = parseLimitOverrides(
    Object.entries(spec.service.limits ?? {}).map(([key, value]) => `${key}=${value}`),
    'service.limits',
  );
  const limits = mergeLimitOverrides(fileLimits, resolved.limits);
  checkLimitOverrides(limits, resolved.plan, 'service.limits');
  return { ...resolved, limits };
}
