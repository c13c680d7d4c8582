import type { Command } from 'commander';
import type { CommandContext } from '../command-context.js';
import { intAtLeast } from '../internal/parse-args.js';
import { UsageError } from '../internal/usage-error.js';

interface SimFlags {
  host: string;
  port: number;
  token: string[];
  seed: number;
  clockSpeed: number;
}

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new UsageError(`--clock-speed must be a number > 0, got ${JSON.stringify(value)}`);
  return n;
}

/** `quoteflow sim`: the simulator of the service, until SIGINT/SIGTERM. */
export function registerSimCommand(program: Command, ctx: CommandContext): void {
  program
    .command('sim')
    .summary('start the market-data simulator')
    .description(
      'Starts the simulator of the market-data service (every endpoint, plan limits enforced per token, a seeded ' +
        'market). The first line on stdout is "listening on http://HOST:PORT"; it runs until SIGINT/SIGTERM.',
    )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port (0 = a free one)', intAtLeast(0), 0)
    .option(
      '--token <token:plan>',
      'a token and its plan, repeatable (default demo:professional)',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option('--seed <n>', 'market seed', intAtLeast(0), 1)
    .option(
      '--clock-speed <x>',
      'market clock speed-up (60 closes a 1-minute bar every second)',
      positiveNumber,
      1,
    )
    .action(async (flags: SimFlags) => {
      const { parseTokenSpecs, startSimulator } = await import('@quoteflow/simulator');
      let tokens;
      try {
        tokens = parseTokenSpecs(flags.token);
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      for (const t of Object.keys(tokens)) ctx.redactor.add(t);
      const sim = await startSimulator({
        host: flags.host,
        port: flags.port,
        tokens,
        seed: flags.seed,
        clockSpeed: flags.clockSpeed,
      });
      ctx.out(`listening on ${sim.url}\n`);
      ctx.logger.info(
        { url: sim.url, tokens: Object.keys(tokens).length, seed: flags.seed, clockSpeed: flags.clockSpeed },
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
