import { createRequire } from 'node:module';
import { Command, Option } from 'commander';
import type { CommandContext } from './command-context.js';
import { LOG_FORMATS, type LogFlags } from './internal/log-settings.js';
import { registerBackfillCommand } from './commands/backfill.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerDepthCommand } from './commands/depth.js';
import { registerInspectCommand } from './commands/inspect.js';
import { registerCompactCommand } from './commands/compact.js';
import { registerReportCommand } from './commands/report.js';
import { registerRunCommand } from './commands/run.js';
import { registerSuspensionsCommand } from './commands/suspensions.js';
import { registerPlanCommand } from './commands/plan.js';
import { registerSyncCommand } from './commands/sync.js';
import { registerSimCommand } from './commands/sim.js';
import { registerStaticInfoCommand } from './commands/static-info.js';
import { registerYesterdayCloseCommand } from './commands/yesterday-close.js';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

/**
 * The `quoteflow` commander program: every command of contract.md, output routed through `ctx`
 * (results to stdout, help to stdout, errors to stderr), and errors thrown instead of exiting, so
 * `runCli` maps them to exit codes.
 */
export function createProgram(
  ctx: CommandContext,
  applyLogFlags: (flags: LogFlags) => void = () => {},
): Command {
  const program = new Command('quoteflow')
    .description('Dependable market-data pipelines over a plan-limited HTTP service.')
    .version(version, '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => ctx.out(text),
      writeErr: (text) => ctx.stderr.write(text),
    })
    .showHelpAfterError('(add --help for usage)')
    .allowExcessArguments(false)
    // contract.md: every command takes the log flags, before or after its name.
    .addOption(
      new Option(
        '--log-format <format>',
        'log lines as pretty text or JSON (env QUOTEFLOW_LOG_FORMAT; default pretty on a terminal, json otherwise)',
      ).choices(LOG_FORMATS),
    )
    .addOption(new Option('-q, --quiet', 'warnings and errors only').conflicts('verbose'))
    .option('-v, --verbose', 'debug lines too')
    .configureHelp({ showGlobalOptions: true })
    .hook('preAction', (_program, action) => applyLogFlags(action.optsWithGlobals<LogFlags>()))
    .addHelpText(
      'after',
      [
        '',
        'Environment: QUOTEFLOW_BASE_URL, QUOTEFLOW_TOKEN, QUOTEFLOW_PLAN (defaults for --base-url, --token, --plan),',
        'QUOTEFLOW_LOG_LEVEL (overridden by -q/-v; default info on a terminal, else warn plus a status line every',
        'QUOTEFLOW_STATUS_INTERVAL_S seconds, 30), QUOTEFLOW_LOG_FORMAT (pretty|json), NO_COLOR,',
        'QUOTEFLOW_CONNECT_TIMEOUT_S (how long Kafka or Redis may take to answer at start, 30, or --duration if longer),',
        'QUOTEFLOW_KAFKA_DELIVERY_TIMEOUT_S (how long a batch may wait for its acknowledgement, 30).',
        'Exit codes: 0 success, 1 failure, 2 bad usage or config, 3 the service refused.',
      ].join('\n'),
    );
  registerSimCommand(program, ctx);
  registerBackfillCommand(program, ctx);
  registerSyncCommand(program, ctx);
  registerDepthCommand(program, ctx);
  registerSuspensionsCommand(program, ctx);
  registerStaticInfoCommand(program, ctx);
  registerYesterdayCloseCommand(program, ctx);
  registerPlanCommand(program, ctx);
  registerInspectCommand(program, ctx);
  registerCompactCommand(program, ctx);
  registerReportCommand(program, ctx);
  registerRunCommand(program, ctx);
  registerDemoCommand(program, ctx);
  return program;
}
