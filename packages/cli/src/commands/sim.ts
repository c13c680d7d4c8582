import type { Command } from 'commander';
import type { CommandContext } from '../command-context.js';
import { intAtLeast } from '../internal/parse-args.js';
import { UsageError } from '../internal/usage-error.js';

interface SimFlags {
  host: string;
  port: number;
  token?: string[];
  seed: number;
  labelling?: string;
}

/** `quoteflow sim`: the simulator of the service, until SIGINT/SIGTERM. */
export function registerSimCommand(program: Command, ctx: CommandContext): void {
  program
    .command('sim')
    .summary('start the market-data simulator')
    .description(
      'Starts the simulator of the market-data service (every endpoint, plan limits enforced per token, a seeded ' +
        'market). It runs in real time, like its clients. The first line on stdout is "listening on http://HOST:PORT"; ' +
        'it runs until SIGINT/SIGTERM.',
    )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port (0 = a free one)', intAtLeast(0), 0)
    .option(
      '--token <token:plan>',
      'a token and its plan, repeatable (default demo:professional)',
      // No commander default: help would show it as "[]" beside the real one, demo:professional.
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option('--seed <n>', 'market seed', intAtLeast(0), 1)
    .option(
      '--labelling <axis=value,...>',
      'which instant a stock bar timestamp names, any subset of intraday=session|clock, ' +
        'daily=local-midnight|utc-midnight|session-open|in-session, weekly=calendar|first-trading-day, ' +
        'monthly=calendar|first-trading-day (default intraday=session,daily=local-midnight,weekly=calendar,monthly=calendar)',
    )
    .action(async (flags: SimFlags) => {
      const { parseSimLabelling, parseTokenSpecs, startSimulator } = await import('@quoteflow/simulator');
      let tokens;
      let labelling;
      try {
        tokens = parseTokenSpecs(flags.token ?? []);
        labelling = parseSimLabelling(flags.labelling ?? '');
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      for (const t of Object.keys(tokens)) ctx.redactor.add(t);
      const sim = await startSimulator({
        host: flags.host,
        port: flags.port,
        tokens,
        seed: flags.seed,
        labelling,
      });
      ctx.out(`listening on ${sim.url}\n`);
      ctx.logger.info(
        { url: sim.url, tokens: Object.keys(tokens).length, seed: flags.seed, labelling: sim.labelling },
        'simulator started',
      );
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      const requests = sim.log.length;
      const refused = sim.log.refused().length;
      await sim.close();
      ctx.logger.info({ requests, refused }, 'simulator stopped');
    });
}
