/**
 * What an operator monitors quoteflow with (deploy/): the Prometheus alert rules pass
 * `promtool check rules` and their unit tests (`promtool test rules`), and every metric the rules
 * and the Grafana dashboard query is one a real scrape shows: a sync's `/metrics` against the
 * simulator, its PromQL parsed with Prometheus's own grammar (@prometheus-io/lezer-promql).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startSimulator, type Simulator } from '@quoteflow/simulator';
import { startQuoteflow } from './support/quoteflow-process.js';
import { freePort } from './support/redis-server.js';

const ROOT = join(import.meta.dirname, '..');
const RULES = join(ROOT, 'deploy', 'prometheus', 'quoteflow-alerts.yml');
const RULE_TESTS = join(ROOT, 'deploy', 'prometheus', 'quoteflow-alerts.test.yml');
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'quoteflow-dashboard.json');
const PROMTOOL = join(ROOT, '.cache', 'prometheus', 'usr', 'bin', 'promtool');
/**
 * Metrics the rules may name ahead of the change that serves them: none of them may be in a scrape
 * yet. Once one is, this test fails until it leaves this list.
 */
const NOT_YET_SERVED: readonly string[] = [];
const TOKEN = 'tok-ops-5e21c8';

function promtool(args: readonly string[], input?: string): { status: number | null; output: string } {
  const r = spawnSync(PROMTOOL, args, { cwd: join(ROOT, 'deploy', 'prometheus'), encoding: 'utf8', input });
  if (r.error !== undefined)
    throw new Error(`promtool could not run (bash scripts/test-tools.sh unpacks it): ${r.error.message}`);
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** The metric names a PromQL expression selects; a selector without a name, or a syntax error, throws. */
function metricsOf(expr: string): string[] {
  const names: string[] = [];
  parser.parse(expr).iterate({
    enter: (node) => {
      if (node.type.isError) throw new Error(`not PromQL at ${node.from}: ${expr}`);
      if (node.name !== 'VectorSelector') return;
      const name = node.node.getChild('Identifier');
      if (name === null) throw new Error(`a selector without a metric name: ${expr}`);
      names.push(expr.slice(name.from, name.to));
    },
  });
  return names;
}

interface Dashboard {
  readonly panels: readonly { readonly targets?: readonly { readonly expr: string }[] }[];
  readonly templating: { readonly list: readonly { readonly definition?: string }[] };
}

/** Every PromQL expression of the rules and the dashboard (its panels and `label_values(…)` variables). */
async function expressions(): Promise<{ where: string; expr: string }[]> {
  const rules = parseYaml(await readFile(RULES, 'utf8')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  };
  const dashboard = JSON.parse(await readFile(DASHBOARD, 'utf8')) as Dashboard;
  return [
    ...rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `rule ${r.alert}`, expr: r.expr }))),
    ...dashboard.panels.flatMap((p) =>
      (p.targets ?? []).map((t) => ({ where: 'dashboard panel', expr: t.expr })),
    ),
    ...dashboard.templating.list.flatMap((v) => {
      const m = /^label_values\((.+),\s*\w+\)$/.exec(v.definition ?? '');
      return m === null ? [] : [{ where: 'dashboard variable', expr: m[1]! }];
    }),
  ];
}

/** The sample names of a scrape (`…_bucket`, `…_count` as exposed). */
function scraped(text: string): Set<string> {
  return new Set(
    text
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'))
      .map((l) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(l)![0]),
  );
}

describe('the Prometheus alert rules', () => {
  it('pass promtool check rules', () => {
    const r = promtool(['check', 'rules', RULES]);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('SUCCESS: 11 rules found');
  });

  it('fire when they should and only then (promtool test rules)', () => {
    const r = promtool(['test', 'rules', RULE_TESTS]);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('SUCCESS');
  });
});

describe('the rules and the Grafana dashboard', () => {
  let sim: Simulator;
  let work: string;
  beforeAll(async () => {
    sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 5 });
    work = await mkdtemp(join(tmpdir(), 'qf-ops-'));
  });
  afterAll(async () => {
    await sim.close();
    await rm(work, { recursive: true, force: true });
  });

  it('name only metrics a running sync serves on /metrics', async () => {
    const wanted = new Map<string, string>();
    for (const { where, expr } of await expressions())
      for (const name of metricsOf(expr)) wanted.set(name, where);
    expect(wanted.size).toBeGreaterThan(20);

    const port = await freePort();
    const run = startQuoteflow(
      [
        'sync',
        '--codes',
        'BTCUSDT,AAPL.US',
        '--kline-types',
        '1,8',
        '--bars',
        '20',
        '--out',
        join(work, 'out'),
      ].concat(['--checkpoint-ms', '500', '--metrics-port', String(port)]),
      { QUOTEFLOW_BASE_URL: sim.url, QUOTEFLOW_TOKEN: TOKEN, QUOTEFLOW_PLAN: 'professional' },
    );
    try {
      // Series appear as the sync works: requests, final bars (freshness, lag), checkpoints, files.
      const text = await vi.waitFor(
        async () => {
          const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
          const missing = [...wanted.keys()].filter(
            (n) => !NOT_YET_SERVED.includes(n) && !scraped(body).has(n),
          );
          expect(missing).toEqual([]);
          return body;
        },
        { timeout: 60_000, interval: 250 },
      );
      const served = scraped(text);
      for (const name of NOT_YET_SERVED) expect(served.has(name), `${name} is served now`).toBe(false);
      // The new series pass Prometheus's own linter too.
      expect(promtool(['check', 'metrics'], text)).toEqual({ status: 0, output: '' });
    } finally {
      run.child.kill('SIGTERM');
    }
    expect((await run.done).code).toBe(0);
  });
});
