/**
 * What a user installs: the packages packed as they would be published, unpacked into fresh
 * projects beside exactly the dependencies their manifests declare (test/support/packed-install.ts).
 * The tarballs carry no build state; a library install brings no Kafka client, AWS SDK, schema
 * registry client, Arrow, Parquet or DuckDB (optional peers of @quoteflow/sinks, installed by who
 * uses them); a part used without its library fails at once naming the packages to install;
 * files-only and Kafka-only projects run with only their own; the README's embedding code compiles
 * strict with `skipLibCheck: false` against the packed declarations; and a Node older than
 * `engines` gets a clear refusal from the library and the CLI, on a real old Node.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { consumeWithKcat, kafkaBrokers, uniquePrefix } from './support/kafka.js';
import {
  dependencyClosure,
  installPacked,
  packWorkspace,
  REPO_ROOT,
  type Manifest,
  type Packed,
} from './support/packed-install.js';
import { blocksOf, READER_COMPILER_OPTIONS } from './support/readme-blocks.js';

const LIBRARY = [
  '@quoteflow/core',
  '@quoteflow/operators',
  '@quoteflow/sinks',
  '@quoteflow/pipelines',
  '@quoteflow/simulator',
];
/** What a library install used to bring whether used or not (issue: 89 packages, 105 MB). */
const HEAVY = [
  '@aws-sdk/client-s3',
  '@aws-sdk/lib-storage',
  'kafkajs',
  '@platformatic/kafka',
  '@platformatic/wasm-utils',
  '@kafkajs/confluent-schema-registry',
  'avsc',
  'apache-arrow',
  'parquet-wasm',
  '@duckdb/node-api',
];
const FILES = ['apache-arrow', 'parquet-wasm'];
const KAFKA = ['kafkajs', '@platformatic/kafka'];
/** A Node older than engines.node, provided by scripts/test-tools.sh. */
const OLD_NODE = join(REPO_ROOT, '.tools/old-node/bin/node');
const TOKEN = 'packed-token-7c2e';
/** The token of the run that must send no request. */
const UNUSED_TOKEN = 'packed-token-unused-41d0';

let packed: Packed;
let sim: Simulator;

/** Runs an ES module in `project` with `node` (this one by default), to its end (two minutes at most). */
async function runIn(
  project: string,
  code: string,
  env: Record<string, string> = {},
  node = process.execPath,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const file = join(project, `script-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, code);
  // Asynchronously: the simulator it talks to answers from this process. Without the NODE_PATH
  // `pnpm exec` sets (the workspace's every package): a user's project has only its own.
  const { NODE_PATH: _, ...inherited } = process.env;
  const child = spawn(node, [file], { cwd: project, env: { ...inherited, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const status = await new Promise<number | null>((done) => child.on('close', done));
  clearTimeout(killer);
  return { status, stdout, stderr };
}

/**
 * Type-checks `files` in `project` as a strict consumer that checks libraries' declarations too
 * (`skipLibCheck: false`): every file the program loads, or those `only` picks. Also returns the
 * files the program loaded.
 */
function typeCheck(
  project: string,
  files: readonly string[],
  only?: (fileName: string) => boolean,
): { errors: string[]; loaded: string[] } {
  const program = ts.createProgram(
    files.map((f) => join(project, f)),
    { ...READER_COMPILER_OPTIONS, skipLibCheck: false },
  );
  const checked = program.getSourceFiles().filter((f) => only?.(f.fileName) ?? true);
  const errors = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...checked.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
  ].map((d) => {
    const where = d.file === undefined ? '' : `${d.file.fileName.slice(project.length + 1)}: `;
    return `${where}${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
  return { errors, loaded: program.getSourceFiles().map((f) => f.fileName) };
}

beforeAll(async () => {
  packed = packWorkspace();
  sim = await startSimulator({
    port: 0,
    tokens: { [TOKEN]: 'premium', [UNUSED_TOKEN]: 'premium' },
    seed: 35,
  });
}, 120_000);

afterAll(async () => {
  await sim?.close();
  if (packed !== undefined) rmSync(packed.dir, { recursive: true, force: true });
});

describe('packed packages', () => {
  it('no tarball carries build state or tests', () => {
    expect([...packed.tarballs.keys()].sort()).toEqual(
      ['@quoteflow/cli', '@quoteflow/cluster', ...LIBRARY, '@quoteflow/report'].sort(),
    );
    for (const name of packed.tarballs.keys()) {
      const entries = packed.entries(name);
      expect(entries, name).toContain('package/dist/index.d.ts');
      expect(
        entries.filter((e) => /\.tsbuildinfo$|\.test\.ts$|\/test-support\//.test(e)),
        name,
      ).toEqual([]);
    }
  });

  it("every package states the same Node.js in engines, the repository's", () => {
    const root = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest;
    expect(root.engines?.node).toMatch(/^>=\d+\.\d+\.\d+$/);
    for (const m of packed.manifests.values()) expect(m.engines?.node, m.name).toBe(root.engines?.node);
  });

  it('a library install brings no Kafka client, AWS SDK, schema registry client, Arrow, Parquet or DuckDB: sinks names them as optional peers', () => {
    const thirdParty = new Set<string>();
    for (const name of LIBRARY)
      for (const dep of Object.keys(packed.manifests.get(name)!.dependencies ?? {}))
        if (!dep.startsWith('@quoteflow/')) thirdParty.add(dep);
    const brought = dependencyClosure(thirdParty);
    expect(HEAVY.filter((h) => brought.has(h))).toEqual([]);
    const sinks = packed.manifests.get('@quoteflow/sinks')!;
    for (const name of HEAVY.filter((h) => h !== '@duckdb/node-api')) {
      expect(sinks.peerDependencies?.[name], name).toMatch(/^\^?\d/);
      expect(sinks.peerDependenciesMeta?.[name]?.optional, name).toBe(true);
    }
    // The CLI keeps what its commands need.
    const cli = packed.manifests.get('@quoteflow/cli')!;
    for (const name of HEAVY.filter((h) => h !== '@duckdb/node-api'))
      expect(cli.dependencies?.[name], name).toBeDefined();
  });

  it('a part used without its library fails before any request or file, naming the packages to install', async () => {
    const project = installPacked(packed, LIBRARY);
    const dir = join(project, 'data');
    const r = await runIn(
      project,
      `
      import { QuoteflowClient } from '@quoteflow/core';
      import { klineSync } from '@quoteflow/pipelines';
      import { KafkaSink, SchemaRegistrySerializer } from '@quoteflow/sinks';
      const out = {};
      const failure = (e) => ({ name: e.name, code: e.code, message: e.message });
      const client = new QuoteflowClient({ baseUrl: process.env.BASE_URL, token: '${UNUSED_TOKEN}', plan: 'premium' });
      const sync = klineSync({ client, codes: ['BTCUSDT'], klineTypes: [8], bars: 5, live: false, files: { dir: ${JSON.stringify(dir)} } });
      await sync.done.catch((e) => (out.files = failure(e)));
      try { new KafkaSink({ brokers: '127.0.0.1:9' }); } catch (e) { out.kafka = failure(e); }
      await SchemaRegistrySerializer.open({ url: 'http://127.0.0.1:9', kinds: ['depth'] }).catch((e) => (out.registry = failure(e)));
      await client.close();
      console.log(JSON.stringify(out));
      `,
      { BASE_URL: sim.url },
    );
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, { name: string; code: string; message: string }>;
    const missing = (install: string) =>
      expect.objectContaining({
        code: 'QF_MISSING_PACKAGE',
        message: expect.stringContaining(`npm install ${install}`) as string,
      }) as unknown;
    expect(out['files']).toEqual(missing('apache-arrow@21.2.0 parquet-wasm@^0.8.0'));
    expect(out['files']!.message).toContain('datasets');
    expect(out['kafka']).toEqual(missing('kafkajs@^2.2.4'));
    expect(out['registry']).toEqual(missing('@kafkajs/confluent-schema-registry@^4.1.0 avsc@^5.7.9'));
    expect(sim.log.filter({ token: UNUSED_TOKEN })).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  });

  it('files only: with apache-arrow and parquet-wasm beside them and no Kafka client, klineSync writes its dataset', async () => {
    const project = installPacked(packed, LIBRARY, FILES);
    expect(HEAVY.filter((h) => !FILES.includes(h) && existsSync(join(project, 'node_modules', h)))).toEqual(
      [],
    );
    const r = await runIn(
      project,
      `
      import { QuoteflowClient } from '@quoteflow/core';
      import { klineSync } from '@quoteflow/pipelines';
      const client = new QuoteflowClient({ baseUrl: process.env.BASE_URL, token: '${TOKEN}', plan: 'premium' });
      const sync = klineSync({ client, codes: ['BTCUSDT'], klineTypes: [8], bars: 5, live: false, settleWaitMs: 0, files: { dir: './data' } });
      const summary = await sync.done;
      await client.close();
      console.log(JSON.stringify({ closedBars: summary.closedBars, files: summary.files }));
      `,
      { BASE_URL: sim.url },
    );
    expect(r.status, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { closedBars: number; files: string[] };
    expect(summary.closedBars).toBe(5);
    expect(summary.files.length).toBeGreaterThan(0);
    for (const f of summary.files) expect(existsSync(join(project, 'data', f)), f).toBe(true);
  });

  it('Kafka only: with kafkajs and @platformatic/kafka beside them and no Arrow or Parquet, klineSync commits its bars to a topic exactly once', async () => {
    const project = installPacked(packed, LIBRARY, KAFKA);
    expect(HEAVY.filter((h) => !KAFKA.includes(h) && existsSync(join(project, 'node_modules', h)))).toEqual(
      [],
    );
    const brokers = await kafkaBrokers();
    const prefix = uniquePrefix('packed');
    const r = await runIn(
      project,
      `
      import { QuoteflowClient } from '@quoteflow/core';
      import { klineSync } from '@quoteflow/pipelines';
      const client = new QuoteflowClient({ baseUrl: process.env.BASE_URL, token: '${TOKEN}', plan: 'premium' });
      const kafka = { brokers: process.env.BROKERS, topicPrefix: '${prefix}', transactionalId: '${prefix}-1' };
      const sync = klineSync({ client, codes: ['ETHUSDT'], klineTypes: [8], bars: 4, live: false, settleWaitMs: 0, kafka });
      const summary = await sync.done;
      await client.close();
      console.log(JSON.stringify({ closedBars: summary.closedBars }));
      `,
      { BASE_URL: sim.url, BROKERS: brokers },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ closedBars: 4 });
    const read = await consumeWithKcat(brokers, `${prefix}.kline`, 30_000, 'read_committed');
    // Each closed bar once (a forming bar's revision may be there too, `final: false`).
    const closed = read.filter((m) => (JSON.parse(m.value) as { final: boolean }).final);
    expect(new Set(closed.map((m) => `${m.key} ${(JSON.parse(m.value) as { ts: string }).ts}`)).size).toBe(4);
    expect(closed).toHaveLength(4);
  }, 120_000);

  it("the README's embedding code compiles strict with skipLibCheck: false against the packed declarations", () => {
    // What the README tells a user to install for it: both sinks' libraries, rxjs, Node's types.
    const project = installPacked(packed, LIBRARY, [...FILES, ...KAFKA, 'rxjs', '@types/node']);
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const blocks = blocksOf('README.md', readme).filter((b) => b.lang === 'ts');
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const files = blocks.map((b, i) => {
      const file = `readme-${i}-line-${b.line}.ts`;
      writeFileSync(join(project, file), `${b.assumes}${b.code}\nexport {};\n`);
      return file;
    });
    const readmeCheck = typeCheck(project, files);
    // Our declarations pull in no declaration of an optional peer (@platformatic/kafka's has errors).
    const peers = HEAVY.map((h) => `/node_modules/${h}/`);
    expect(readmeCheck.loaded.filter((f) => peers.some((p) => f.includes(p)))).toEqual([]);
    expect(readmeCheck.errors).toEqual([]);
    // And every library package whole, in a project with none of the optional peers: our
    // declarations import nothing it lacks (the third-party ones were checked above).
    const bare = installPacked(packed, LIBRARY, ['@types/node']);
    writeFileSync(
      join(bare, 'all.ts'),
      `${LIBRARY.map((name, i) => `import * as p${i} from '${name}';`).join('\n')}\nconsole.log(${LIBRARY.map((_, i) => `p${i}`).join(', ')});\n`,
    );
    const ours = (f: string) => f.includes('/node_modules/@quoteflow/') || !f.includes('/node_modules/');
    expect(typeCheck(bare, ['all.ts'], ours).errors).toEqual([]);
  }, 300_000);
});

describe('on a Node.js older than engines', () => {
  let project: string;
  let oldVersion: string;
  beforeAll(() => {
    if (!existsSync(OLD_NODE))
      throw new Error(`${OLD_NODE}: missing (bash scripts/test-tools.sh provides it)`);
    oldVersion = spawnSync(OLD_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    project = installPacked(packed, [...packed.tarballs.keys()]);
  });

  it.each([
    '@quoteflow/core',
    '@quoteflow/operators',
    '@quoteflow/sinks',
    '@quoteflow/pipelines',
    '@quoteflow/cluster',
    '@quoteflow/report',
  ])('importing %s says which Node.js it needs and which one this is', async (name) => {
    const r = await runIn(project, `await import('${name}');`, {}, OLD_NODE);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      `quoteflow needs Node.js >=22.22.0 (package.json "engines"); this is Node.js ${oldVersion}`,
    );
  });

  it('the installed CLI says which Node.js it needs, and names nothing the package does not ship', () => {
    const bin = join(project, 'node_modules/@quoteflow/cli/bin/quoteflow');
    const { NODE_PATH: _, QUOTEFLOW_NODE: __, ...inherited } = process.env;
    const env = { ...inherited, PATH: `${dirname(OLD_NODE)}:/usr/bin:/bin` };
    const old = spawnSync(bin, ['--version'], { encoding: 'utf8', env });
    expect(old.status).toBe(1);
    expect(old.stderr).toContain(
      `quoteflow: needs Node.js >= 22.22.0, but ${OLD_NODE} is Node.js ${oldVersion}`,
    );
    expect(old.stderr).not.toContain('toolchain');
    // On a Node that satisfies engines, the same install runs.
    const current = spawnSync(bin, ['--version'], {
      encoding: 'utf8',
      env: { ...env, PATH: `${dirname(process.execPath)}:/usr/bin:/bin` },
    });
    expect(current.status, current.stderr).toBe(0);
    expect(current.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});
