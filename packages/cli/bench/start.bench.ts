// How long a `quoteflow` command takes to start: `quoteflow --version` (the built CLI, node flags as
// bin/quoteflow sets them) against a bare Node start in the same run, and against the same command
// with the two Kafka client libraries loaded up front (as every command loaded them before they
// were loaded on first use). Wall time of each start and CPU (user + system, from the child's
// rusage through /usr/bin/time), medians of BENCH_START_RUNS (default 25) runs, interleaved so
// load drift hits each alike.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const runs = Number(process.env['BENCH_START_RUNS'] ?? 25);
const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const fromSinks = createRequire(fileURLToPath(new URL('../../sinks/package.json', import.meta.url)));
const preload = ['@platformatic/kafka', 'kafkajs'].map(
  (name) => `--import=${pathToFileURL(fromSinks.resolve(name)).href}`,
);

const variants: readonly { name: string; args: readonly string[] }[] = [
  { name: 'bare Node (`node -e 0`)', args: ['-e', '0'] },
  { name: '`quoteflow --version`', args: ['--max-semi-space-size=8', main, '--version'] },
  {
    name: '`quoteflow --version`, Kafka clients loaded at start (before)',
    args: ['--max-semi-space-size=8', ...preload, main, '--version'],
  },
];

/** Wall ms and CPU ms of one start. */
function start(args: readonly string[]): { wallMs: number; cpuMs: number } {
  const t0 = performance.now();
  const run = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, ...args], { encoding: 'utf8' });
  const wallMs = performance.now() - t0;
  if (run.status !== 0) throw new Error(`${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  const [user, sys] = run.stderr.trim().split('\n').at(-1)!.split(' ').map(Number);
  return { wallMs, cpuMs: (user! + sys!) * 1000 };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const samples = variants.map(() => ({ wall: [] as number[], cpu: [] as number[] }));
for (const v of variants) start(v.args); // warm the file cache
for (let i = 0; i < runs; i++) {
  for (const [k, v] of variants.entries()) {
    const s = start(v.args);
    samples[k]!.wall.push(s.wallMs);
    samples[k]!.cpu.push(s.cpuMs);
  }
}
const floor = median(samples[0]!.wall);
console.log(`| start (median of ${runs}) | wall (ms) | CPU (ms) | wall over bare Node (ms) |`);
console.log('| --- | ---: | ---: | ---: |');
for (const [k, v] of variants.entries()) {
  const wall = median(samples[k]!.wall);
  console.log(
    `| ${v.name} | ${wall.toFixed(0)} | ${median(samples[k]!.cpu).toFixed(0)} | ${(wall - floor).toFixed(0)} |`,
  );
}
