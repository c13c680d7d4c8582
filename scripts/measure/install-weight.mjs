// What `npm install` brings for each way of using quoteflow as a library: the packages packed
// (`pnpm pack`, after `pnpm build`), installed with npm from the tarballs into fresh projects, the
// optional peer dependencies a use needs named beside them. Prints a markdown table of packages
// added and megabytes of node_modules. Needs the npm registry.
//
//   node scripts/measure/install-weight.mjs [repository root, default this one]
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? join(import.meta.dirname, '../..'));
const work = mkdtempSync(join(tmpdir(), 'qf-weight-'));

function run(command, args, cwd) {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  return `${r.stdout}\n${r.stderr}`;
}

const packs = join(work, 'packs');
run('pnpm', ['-r', '--filter', './packages/*', 'pack', '--pack-destination', packs], root);
const tarball = (name) =>
  join(
    packs,
    readdirSync(packs).find((f) => f.startsWith(`quoteflow-${name}-`)),
  );
const sinks = JSON.parse(run('tar', ['-xzOf', tarball('sinks'), 'package/package.json'], work));
// The versions this release supports: the optional peers' ranges (the dependencies' before they were peers).
const range = (name) => sinks.peerDependencies?.[name] ?? sinks.dependencies?.[name];
const peer = (...names) => names.map((n) => `${n}@${range(n)}`);

const LIBRARY = ['core', 'operators', 'sinks', 'pipelines', 'simulator'];
const SCENARIOS = [
  ['library, no sink library', LIBRARY, []],
  ['files only (Parquet datasets)', LIBRARY, peer('apache-arrow', 'parquet-wasm')],
  ['Kafka only, exactly once (kafkajs driver)', LIBRARY, peer('kafkajs', '@platformatic/kafka')],
  ['Kafka only, platformatic driver', LIBRARY, peer('@platformatic/kafka')],
  [
    "files and Kafka (the README's klineSync)",
    LIBRARY,
    peer('apache-arrow', 'parquet-wasm', 'kafkajs', '@platformatic/kafka'),
  ],
  ['everything, with cli, cluster and report', [...LIBRARY, 'cli', 'cluster', 'report'], []],
];

console.log(`| install | packages | MB |\n| --- | ---: | ---: |`);
for (const [label, ours, extra] of SCENARIOS) {
  const project = join(work, `p${SCENARIOS.findIndex((s) => s[0] === label)}`);
  mkdirSync(project);
  run('npm', ['init', '-y'], project);
  const out = run('npm', ['install', '--no-audit', '--no-fund', ...ours.map(tarball), ...extra], project);
  const added = Number(/added (\d+) packages?/.exec(out)?.[1] ?? NaN);
  const mb = Number(run('du', ['-sm', join(project, 'node_modules')], project).split(/\s/)[0]);
  console.log(`| ${label} | ${added} | ${mb} |`);
}
rmSync(work, { recursive: true, force: true });
