import { enableCompileCache } from 'node:module';

// Node's on-disk code cache (in the OS temp directory): later starts skip compiling the CLI and
// its dependencies. Enabled before anything else loads, hence the dynamic import below.
enableCompileCache();
const [{ runCli }, { StopWaits }] = await Promise.all([
  import('./run-cli.js'),
  import('./internal/stop-waits.js'),
]);
const stopWaits = new StopWaits();

// SIGINT/SIGTERM abort the run: long commands stop polling, flush their sinks, write state and
// return. Whatever still hangs after 9.5 s is cut off, so shutdown always ends within 10 s.
const stop = new AbortController();
let signals = 0;
const onSignal = (signal: NodeJS.Signals): void => {
  signals += 1;
  if (signals > 1) process.exit(130);
  stop.abort(new Error(`stopped by ${signal}`));
  setTimeout(() => {
    const cause = stopWaits.describe();
    process.stderr.write(
      `quoteflow: error: shutdown took longer than 9.5 s${cause === undefined ? '' : ` (${cause})`}; exiting without a complete flush\n`,
    );
    process.exit(1);
  }, 9_500).unref();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  stdoutIsTTY: process.stdout.isTTY === true,
  stderrIsTTY: process.stderr.isTTY === true,
  signal: stop.signal,
  stopWaits,
});
// Exit once stdout has drained: open keep-alive sockets must not hold the process.
process.stdout.write('', () => process.exit(code));
