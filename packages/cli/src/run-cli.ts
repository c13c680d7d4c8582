import { CommanderError } from 'commander';
import { isQuoteflowError } from '@quoteflow/core/errors';
import type { CliIo, CommandContext } from './command-context.js';
import { createProgram } from './create-program.js';
import { createLogging } from './internal/create-logger.js';
import { EXIT, type ExitCode } from './internal/exit-codes.js';
import { exitCodeFor } from './internal/exit-code-for.js';
import { resolveLogSettings, type LogSettings } from './internal/log-settings.js';
import { Redactor } from './internal/redactor.js';
import { tokensInArgs } from './internal/service-options.js';
import { kafkaSecretsInArgs } from './internal/kafka-options.js';
import { StderrChannel } from './internal/stderr-channel.js';
import { StopWaits } from './internal/stop-waits.js';

/**
 * Runs the `quoteflow` command line `argv` (without node and script) against `io` and resolves to
 * the exit code: 0 success, 1 failure, 2 bad usage or config, 3 the service refused. Never writes
 * anything but results to `io.stdout`, and never a token anywhere.
 *
 * @example process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() });
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const redactor = new Redactor();
  for (const token of tokensInArgs(argv, io.env)) redactor.add(token);
  for (const secret of kafkaSecretsInArgs(argv)) redactor.add(secret);
  const stderr = new StderrChannel(io.stderr, redactor, io.stderrIsTTY ?? false);
  // The environment's log settings until commander has parsed the flags (applied before the
  // action runs); a bad value there is reported then, unless a flag overrides it.
  let initial: LogSettings;
  try {
    initial = resolveLogSettings({}, io.env, stderr.isTTY);
  } catch {
    initial = { format: stderr.isTTY ? 'pretty' : 'json', level: 'info', statusLevel: 'info', color: false };
  }
  const logging = createLogging(stderr, initial);
  const ctx: CommandContext = {
    io,
    redactor,
    stderr,
    logger: logging.logger,
    status: logging.status,
    signal: io.signal ?? new AbortController().signal,
    stopWaits: io.stopWaits ?? new StopWaits(),
    out: (text) => {
      io.stdout.write(redactor.redact(text));
    },
    progressBars: () => {
      const { format, level } = logging.settings();
      return stderr.isTTY && format === 'pretty' && ['trace', 'debug', 'info'].includes(level);
    },
  };
  const program = createProgram(ctx, (flags) =>
    logging.apply(resolveLogSettings(flags, io.env, stderr.isTTY)),
  );
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    const code = exitCodeFor(err);
    // Commander has already printed its own message (naming the flag) and help.
    if (!(err instanceof CommanderError)) {
      stderr.write(`quoteflow: error: ${describe(err)}\n`);
      ctx.logger.debug({ err: describe(err, true) }, 'failure details');
    }
    return code;
  }
}

function describe(err: unknown, withStack = false): string {
  if (!(err instanceof Error)) return String(err);
  const code = isQuoteflowError(err) && err.code !== 'QF_USAGE' ? ` [${err.code}]` : '';
  let text = `${err.message}${code}`;
  if (withStack && err.stack !== undefined) text = err.stack;
  if (err.cause instanceof Error && !err.message.includes(err.cause.message))
    text += ` (cause: ${err.cause.message})`;
  return text;
}
