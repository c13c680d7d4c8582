import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Imports the BUILT packages with plain Node (no `source` condition), the way a user would.
const root = fileURLToPath(new URL('..', import.meta.url));

function importInNode(script: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
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
    'barPeriodAt',
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
  '@quoteflow/report': ['collectReportData', 'renderReport', 'coverageOf'],
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

  it.each(Object.keys(EXPECTED))('%s keeps its internals unreachable and ships type declarations', (name) => {
    const run = importInNode(`await import(${JSON.stringify(`${name}/dist/index.js`)});`);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/ERR_PACKAGE_PATH_NOT_EXPORTED/);
    const pkg = JSON.parse(readFileSync(`${root}/packages/${name.split('/')[1]}/package.json`, 'utf8')) as {
      exports: Record<string, { types?: string } | string>;
      engines: { node: string };
    };
    // Core's durable write has an entry point of its own, for threads that need only it (the
    // dataset writer's encoders); its names are core's too, so the API report covers them.
    const extra = name === '@quoteflow/core' ? ['./write-file-durably'] : [];
    expect(Object.keys(pkg.exports).sort()).toEqual(['.', './package.json', ...extra].sort());
    expect((pkg.exports['.'] as { types: string }).types).toBe('./dist/index.d.ts');
    expect(pkg.engines.node).toBe('>=22');
  });
});
