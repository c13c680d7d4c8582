import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packWorkspace, type Packed } from './support/packed-install.js';

// Imports the BUILT packages with plain Node (no `source` condition), the way a user would.
const root = fileURLToPath(new URL('..', import.meta.url));
const ROOT_ENGINES = (
  JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { engines: { node: string } }
).engines.node;

function importInNode(
  script: string,
  nodeOptions: readonly string[] = [],
): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [...nodeOptions, '--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A module hook that prints `[resolved NAME]` to stderr whenever a Kafka client library is resolved. */
function kafkaClientsHook(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'qf-hook-')), 'kafka-clients-hook.mjs');
  writeFileSync(
    file,
    [
      "import { registerHooks } from 'node:module';",
      'registerHooks({',
      '  resolve(specifier, context, next) {',
      '    if (/^(kafkajs|@platformatic\\/(kafka|wasm-utils))$/.test(specifier)) process.stderr.write(`[resolved ${specifier}]\\n`);',
      '    return next(specifier, context);',
      '  },',
      '});',
    ].join('\n'),
  );
  return pathToFileURL(file).href;
}

const EXPECTED: Record<string, readonly string[]> = {
  '@quoteflow/core': [
    'QuoteflowClient',
    'PlanScheduler',
    'sharedSchedulerFor',
    'planLimits',
    'klineHistory',
    'pollDepth',
    'toAsyncIterable',
    'toReadable',
    'QuoteflowError',
    'calendarOf',
    'seriesKey',
  ],
  '@quoteflow/operators': [
    'dedupeBySeq',
    'normalizeBars',
    'mergeBars',
    'resampleBars',
    'yesterdayClose',
    'suspensionChanges',
  ],
  '@quoteflow/sinks': [
    'KafkaSink',
    'toKafka',
    'DatasetWriter',
    'writeDataset',
    'DatasetSink',
    'KafkaKlineSink',
    'commitTo',
    'SeriesIntake',
  ],
  '@quoteflow/simulator': ['startSimulator'],
  '@quoteflow/pipelines': ['klineSync', 'klineUpdates', 'depthCapture', 'suspensionWatch', 'estimatePlan'],
  '@quoteflow/cluster': ['RedisWindowStore', 'SharedPlanScheduler', 'ClusterMembership'],
  '@quoteflow/report': ['collectReportData', 'renderReport'],
  '@quoteflow/cli': ['runCli'],
};

describe('package exports', () => {
  it.each(Object.entries(EXPECTED))('%s loads from dist with its public API', (name, names) => {
    const run = importInNode(
      `const m = await import(${JSON.stringify(name)}); console.log(JSON.stringify(Object.keys(m)));`,
    );
    expect(run.stderr).toBe('');
    const keys = JSON.parse(run.stdout) as string[];
    for (const exported of names) expect(keys, `${name} exports ${exported}`).toContain(exported);
  });

  it('@quoteflow/core/write-file-durably loads alone from dist', () => {
    const run = importInNode(
      `const m = await import('@quoteflow/core/write-file-durably'); console.log(JSON.stringify(Object.keys(m).sort()));`,
    );
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual([
      'makeDirectory',
      'renameDurably',
      'syncDirectory',
      'writeFileDurably',
    ]);
  });

  it('@quoteflow/core/errors loads alone from dist', () => {
    const run = importInNode(
      `const m = await import('@quoteflow/core/errors'); console.log(JSON.stringify(typeof m.QuoteflowError === 'function' && typeof m.isQuoteflowError === 'function'));`,
    );
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toBe(true);
  });

  // Loading core's entry costs ~0.25 s of CPU (RxJS, undici, zod: ~750 modules), the sinks' more:
  // paid by every `--help`, `--version` and mistyped flag, and by each of the many CLI runs of the
  // tests. Registering the commands needs commander, the logger and the error classes only.
  it('the CLI lists its commands and its version loading no library entry point, RxJS, undici or zod', () => {
    const hook = join(mkdtempSync(join(tmpdir(), 'qf-hook-')), 'resolved-hook.mjs');
    writeFileSync(
      hook,
      [
        "import { registerHooks } from 'node:module';",
        'registerHooks({',
        '  resolve(specifier, context, next) {',
        '    const r = next(specifier, context);',
        '    process.stderr.write(`[resolved ${r.url}]\\n`);',
        '    return r;',
        '  },',
        '});',
      ].join('\n'),
    );
    const heavy =
      /\/node_modules\/(rxjs|undici|zod|bottleneck|temporal-polyfill|apache-arrow|parquet-wasm|ioredis|prom-client)\//;
    for (const args of [['--help'], ['--version'], ['sync', '--help'], ['depth', '--no-such-flag']]) {
      const run = spawnSync(
        process.execPath,
        [`--import=${pathToFileURL(hook).href}`, `${root}/packages/cli/dist/main.js`, ...args],
        { cwd: root, encoding: 'utf8' },
      );
      expect(run.status, run.stderr).toBe(args.includes('--no-such-flag') ? 2 : 0);
      const resolved = [...new Set([...run.stderr.matchAll(/^\[resolved (.*)\]$/gm)].map((m) => m[1]!))];
      expect(
        resolved
          .filter((url) => /\/packages\/(?!cli\/)[^/]+\/dist\//.test(url))
          .map((url) => url.replace(/.*\/packages\//, '')),
      ).toEqual(['core/dist/errors.js']);
      expect(resolved.filter((url) => heavy.test(url))).toEqual([]);
    }
  });

  // @platformatic/kafka compiles JSON schemas as it loads (~0.4 s of CPU): every command and
  // embedding paid it at start, Kafka or not.
  it('the Kafka client libraries load when a driver is made, not when @quoteflow/sinks or the CLI starts', () => {
    const hook = kafkaClientsHook();
    const run = importInNode(
      [
        "await import('@quoteflow/sinks');",
        "const sinks = await import('@quoteflow/sinks/internal');",
        "process.stderr.write('[imported]\\n');",
        "const o = { brokers: ['127.0.0.1:9'], clientId: 'lazy', compression: 'lz4', requestTimeoutMs: 1000,",
        '  retryMaxDelayMs: 100, connectTimeoutMs: 100, deliveryTimeoutMs: 1000 };',
        'const kafkajs = new sinks.KafkajsDriver(o);',
        "process.stderr.write('[kafkajs driver]\\n');",
        'const platformatic = new sinks.PlatformaticKafkaDriver(o);',
        "process.stderr.write('[platformatic driver]\\n');",
        'await kafkajs.close(); await platformatic.close();',
      ].join('\n'),
      [`--import=${hook}`],
    );
    expect(run.status, run.stderr).toBe(0);
    const lines = [...new Set(run.stderr.trim().split('\n'))];
    const at = (line: string): number => lines.indexOf(line);
    expect(at('[imported]')).toBe(0);
    // kafkajs and its lz4 codec come with the kafkajs driver; @platformatic/kafka only with its own.
    expect(at('[resolved kafkajs]')).toBeGreaterThan(at('[imported]'));
    expect(at('[resolved @platformatic/wasm-utils]')).toBeGreaterThan(at('[imported]'));
    expect(at('[kafkajs driver]')).toBeGreaterThan(
      Math.max(at('[resolved kafkajs]'), at('[resolved @platformatic/wasm-utils]')),
    );
    expect(at('[resolved @platformatic/kafka]')).toBeGreaterThan(at('[kafkajs driver]'));
    expect(at('[platformatic driver]')).toBeGreaterThan(at('[resolved @platformatic/kafka]'));

    const cli = spawnSync(join(root, 'packages/cli/bin/quoteflow'), ['--version'], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: `--import=${hook}` },
    });
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect(cli.stderr).not.toContain('[resolved');
  });

  it.each(Object.keys(EXPECTED))('%s keeps its internals unreachable and ships type declarations', (name) => {
    const run = importInNode(`await import(${JSON.stringify(`${name}/dist/index.js`)});`);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
    const pkg = JSON.parse(readFileSync(`${root}/packages/${name.split('/')[1]}/package.json`, 'utf8')) as {
      exports: Record<string, { types?: string } | string>;
      engines: { node: string };
    };
    // Core's durable write and its error classes have entry points of their own, for code that needs
    // only them (the dataset writer's encoders; the CLI's start); their names are core's too, so
    // the API report covers them. A
    // package whose names other packages need and users do not has `./internal` (ARCHITECTURE.md).
    const extra = name === '@quoteflow/core' ? ['./errors', './write-file-durably'] : [];
    if (existsSync(`${root}/packages/${name.split('/')[1]}/src/internal.ts`)) extra.push('./internal');
    expect(Object.keys(pkg.exports).sort()).toEqual(['.', './package.json', ...extra].sort());
    expect((pkg.exports['.'] as { types: string }).types).toBe('./dist/index.d.ts');
    // One statement of the Node.js it needs, the repository's (core refuses an older one at import).
    expect(pkg.engines.node).toBe(ROOT_ENGINES);
  });
});

/** Every name a declaration file exports, types included (what the API report lists). */
function exportedNames(declarations: string): string[] {
  const program = ts.createProgram([declarations], {
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(declarations)!)!;
  return checker.getExportsOfModule(module).map((s) => s.name);
}

/**
 * The `.js` files of `dir` that `entries` reach, following the relative imports (static and dynamic)
 * of each module, its declarations and its source (a module of types only, or one loaded by a
 * computed name, is imported by the latter two).
 */
function reachedModules(dir: string, entries: readonly string[]): Set<string> {
  const reached = new Set<string>();
  const next = entries.map((e) => resolve(dir, e));
  for (let file = next.pop(); file !== undefined; file = next.pop()) {
    if (reached.has(file)) continue;
    reached.add(file);
    const source = file.replace(`${dir}/dist/`, `${dir}/src/`).replace(/\.js$/, '.ts');
    for (const code of [file, file.replace(/\.js$/, '.d.ts'), source].filter((f) => existsSync(f))) {
      const { importedFiles } = ts.preProcessFile(readFileSync(code, 'utf8'), true, true);
      for (const { fileName } of importedFiles)
        if (fileName.startsWith('.')) next.push(resolve(dirname(file), fileName));
    }
  }
  return reached;
}

describe('published API and files', () => {
  // What the issue counted: every name of core's index, types included; the rest is `./internal`.
  it('@quoteflow/core exports at most 100 names', () => {
    const names = exportedNames(join(root, 'packages/core/dist/index.d.ts'));
    expect(names.length, names.sort().join(' ')).toBeLessThanOrEqual(100);
  });

  // `./internal` is outside semver: what users read and copy never reaches for it (the API reports
  // are generated: pipelines' planner names are core's, re-exported).
  it('no README and no example imports an internal entry', () => {
    const pattern = '@quoteflow/[a-z]+/internal[\'"]';
    const paths = ['*.md', 'examples', ':!packages/*/api/*.api.md'];
    const run = spawnSync('git', ['grep', '-l', '-E', pattern, '--', ...paths], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim().split('\n').filter(Boolean)).toEqual([]);
  });

  let packed: Packed;
  beforeAll(() => {
    packed = packWorkspace();
  }, 120_000);
  afterAll(() => rmSync(packed.dir, { recursive: true, force: true }));

  // A test double (a fake Kafka, a stub) is imported by tests only: packed, it would be a module no
  // entry point (`exports`, the bin script) loads.
  it.each(Object.keys(EXPECTED))(
    '%s packs no test double: every module it ships is loaded by an entry point',
    (name) => {
      const dir = join(packed.dir, 'unpacked', name);
      mkdirSync(dir, { recursive: true });
      spawnSync('tar', ['-xzf', packed.tarballs.get(name)!, '-C', dir, '--strip-components=1']);
      const files = packed.entries(name).map((e) => e.replace(/^package\//, ''));
      expect(
        files.filter((f) => /test-support|fixture|fake|mock|stub|\.(test|bench)\.[cm]?[jt]s$/i.test(f)),
      ).toEqual([]);

      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        exports: Record<string, { default?: string } | string>;
        bin?: Record<string, string>;
      };
      const entries = Object.values(manifest.exports).flatMap((e) =>
        typeof e === 'string' ? [] : [e.default!],
      );
      for (const bin of Object.values(manifest.bin ?? {}))
        entries.push(...(readFileSync(join(dir, bin), 'utf8').match(/dist\/[\w/.-]+\.js/g) ?? []));
      const loaded = reachedModules(dir, entries);
      const shipped = files.filter((f) => f.endsWith('.js')).map((f) => resolve(dir, f));
      expect(shipped.filter((f) => !loaded.has(f)).map((f) => relative(dir, f))).toEqual([]);
      // The sources ship beside their maps: each is one of those modules.
      const sources = files.filter((f) => /^src\/.*\.ts$/.test(f) && !f.endsWith('.d.ts'));
      const orphans = sources.filter(
        (f) => !loaded.has(resolve(dir, f.replace(/^src\//, 'dist/').replace(/\.ts$/, '.js'))),
      );
      expect(orphans).toEqual([]);
    },
  );
});
