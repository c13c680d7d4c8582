/**
 * `--schema-registry` of every command that produces to Kafka (sync, depth, suspensions --watch,
 * and a pipeline file's `kafka.schemaRegistry` under `run`), the built binary against the
 * simulator, a real Kafka broker and a real Apicurio Registry (basic auth from the environment).
 * A consumer we did not write (Confluent's Python AvroDeserializer) decodes what they produced into
 * the contract's JSON fields; the registry's refusals are exit 1 naming it and the subject, before
 * any request to the service; the password appears in no output or file.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AVRO_SCHEMAS, type KafkaTopicKind } from '@quoteflow/sinks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { kafkaBrokers, uniquePrefix } from './support/kafka.js';
import { filesUnder, runQuoteflow, type QuoteflowRun } from './support/quoteflow-process.js';
import {
  readWithConfluentPython,
  testSchemaRegistry,
  type ConfluentPythonRecord,
  type SchemaRegistryUser,
  type TestSchemaRegistry,
} from './support/schema-registry.js';

const TOKEN = 'cli-schema-registry-5c1d';
let sim: Simulator;
let quiet: Simulator;
let work: string;
let brokers: string;
let registry: TestSchemaRegistry;

const env = (
  user: SchemaRegistryUser | undefined,
  token = TOKEN,
  on: Simulator = sim,
): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: on.url,
  QUOTEFLOW_TOKEN: token,
  QUOTEFLOW_PLAN: 'professional',
  ...(user === undefined
    ? {}
    : { QUOTEFLOW_SCHEMA_REGISTRY_USER: user.username, QUOTEFLOW_SCHEMA_REGISTRY_PASSWORD: user.password }),
});

beforeAll(async () => {
  const tokens = Object.fromEntries(
    ['', '-susp', '-json', '-run', '-fail'].map((s) => [`${TOKEN}${s}`, 'professional' as const]),
  );
  [sim, quiet, brokers, registry] = await Promise.all([
    startSimulator({ port: 0, tokens, seed: 31 }),
    // The failure tests' service: it must see no request at all.
    startSimulator({ port: 0, tokens, seed: 31 }),
    kafkaBrokers(),
    testSchemaRegistry(),
  ]);
  work = await mkdtemp(join(tmpdir(), 'qf-cli-sr-'));
});

afterAll(async () => {
  expect(quiet.log.length).toBe(0);
  await Promise.all([sim.close(), quiet.close()]);
  await rm(work, { recursive: true, force: true });
});

/** The password is in no output and no file the run wrote. */
async function expectNoSecret(runs: readonly QuoteflowRun[], secret: string): Promise<void> {
  for (const r of runs) {
    expect(r.stdout).not.toContain(secret);
    expect(r.stderr).not.toContain(secret);
  }
  for (const f of await filesUnder(work)) expect((await readFile(f)).includes(secret)).toBe(false);
}

const fieldsOf = (kind: KafkaTopicKind): string[] => AVRO_SCHEMAS[kind].fields.map((f) => f.name).sort();
const read = (topics: string | string[], avro: boolean): Promise<ConfluentPythonRecord[]> =>
  readWithConfluentPython(
    brokers,
    topics,
    0,
    avro ? { url: registry.url, user: registry.reader } : undefined,
  );

describe('quoteflow --schema-registry', () => {
  it("sync, depth, suspensions --watch and run produce Avro that decodes to the contract's JSON; a read-only user looks the schema up", async () => {
    const p = {
      sync: uniquePrefix('sr-cli-sync'),
      depth: uniquePrefix('sr-cli-depth'),
      susp: uniquePrefix('sr-cli-susp'),
      suspJson: uniquePrefix('sr-cli-susp-json'),
      run: uniquePrefix('sr-cli-run'),
    };
    const sr = ['--schema-registry', registry.url];
    const pipeline = join(work, 'kline-avro.yaml');
    await writeFile(
      pipeline,
      [
        'version: 1',
        'duration: 15',
        'pipelines:',
        '  - source: { kline: { codes: [ETHUSDT], klineTypes: [1], bars: 3 } }',
        `    sinks: { kafka: { brokers: "${brokers}", topicPrefix: ${p.run}, schemaRegistry: "${registry.url}" } }`,
        '',
      ].join('\n'),
    );
    const w = registry.writer;
    // Each its own token where it queries suspensions (once a minute per token; sync reads halts too).
    // 15 s: five commands share two cores here (with whatever else runs); a stop while sync's or run's start-up still checks
    // the codes (one /batch-kline) fails them (exit 1, "aborted by the caller").
    const runs = await Promise.all([
      runQuoteflow(
        ['sync', '--codes', 'BTCUSDT', '--kline-types', '1', '--bars', '5', '--duration', '15'].concat([
          '--out',
          join(work, 'sync'),
          '--kafka',
          brokers,
          '--topic-prefix',
          p.sync,
          ...sr,
        ]),
        env(w),
      ),
      runQuoteflow(
        [
          'depth',
          '--codes',
          'BTCUSDT,ETHUSDT',
          '--duration',
          '15',
          '--kafka',
          brokers,
          '--topic-prefix',
          p.depth,
          ...sr,
        ],
        env(w),
      ),
      runQuoteflow(
        ['suspensions', '--exchange', 'nyse', '--watch', '--format', 'ndjson', '--duration', '15'].concat([
          '--kafka',
          brokers,
          '--topic-prefix',
          p.susp,
          ...sr,
        ]),
        env(w, `${TOKEN}-susp`),
      ),
      // The same suspensions as JSON (the default), for the comparison.
      runQuoteflow(
        ['suspensions', '--exchange', 'nyse', '--watch', '--format', 'ndjson', '--duration', '15'].concat([
          '--kafka',
          brokers,
          '--topic-prefix',
          p.suspJson,
        ]),
        env(undefined, `${TOKEN}-json`),
      ),
      runQuoteflow(['run', pipeline], env(w, `${TOKEN}-run`)),
    ]);
    for (const [i, r] of runs.entries()) expect(r.code, `run ${i}: ${r.stderr}`).toBe(0);
    expect(
      runs[2]!.stdout.split('\n').filter(Boolean).length,
      `suspension records printed; stderr: ${runs[2]!.stderr}`,
    ).toBeGreaterThan(0);

    const [kline, depth, susp, suspJson, runKline] = await Promise.all([
      read(`${p.sync}.kline`, true),
      read(`${p.depth}.depth`, true),
      read(`${p.susp}.suspension`, true),
      read(`${p.suspJson}.suspension`, false),
      read(`${p.run}.kline`, true),
    ]);
    for (const [records, kind, what] of [
      [kline, 'kline', 'sync'],
      [runKline, 'kline', 'run'],
      [depth, 'depth', 'depth'],
      [susp, 'suspension', 'suspensions'],
    ] as const) {
      expect(records.length, `${what}'s records`).toBeGreaterThan(0);
      for (const r of records) {
        expect(r.schema_id).toEqual(expect.any(Number));
        expect(Object.keys(r.value).sort()).toEqual(fieldsOf(kind));
      }
    }
    // sync: the backfilled closed bars (final) and the bar still forming (final: false).
    expect(kline.filter((r) => r.value['final'] === true).length).toBeGreaterThanOrEqual(5);
    expect(kline.every((r) => r.key === 'BTCUSDT' && r.value['kline_type'] === 1)).toBe(true);
    expect(runKline.every((r) => r.key === 'ETHUSDT')).toBe(true);
    expect(depth.every((r) => r.value['seq'] === null || /^\d+$/.test(String(r.value['seq'])))).toBe(true);
    // One query each, the same records: Avro decodes to exactly the JSON values.
    const byKey = (rs: ConfluentPythonRecord[]): unknown[] =>
      rs.map((r) => [r.key, r.value]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    expect(byKey(susp)).toEqual(byKey(suspJson));
    await expectNoSecret(runs, w.password);

    // A read-only principal may not register: it looks the schema registered above up, and
    // produces with the same id.
    const asReader = await runQuoteflow(
      [
        'depth',
        '--codes',
        'BTCUSDT',
        '--duration',
        '10',
        '--kafka',
        brokers,
        '--topic-prefix',
        p.depth,
        ...sr,
      ],
      env(registry.reader),
    );
    expect(asReader.code, asReader.stderr).toBe(0);
    const after = await read(`${p.depth}.depth`, true);
    expect(after.length).toBeGreaterThan(depth.length);
    expect(new Set(after.map((r) => r.schema_id))).toEqual(new Set([depth[0]!.schema_id]));
    await expectNoSecret([asReader], registry.reader.password);
  }, 180_000);

  it('refuses before any request: wrong password, unreachable registry, incompatible schema (exit 1)', async () => {
    const prefix = uniquePrefix('sr-cli-fail');
    const wrong = 'wrong-password-4b9e';
    const sync = (extra: string[], e: Record<string, string>): Promise<QuoteflowRun> =>
      runQuoteflow(
        ['sync', '--codes', 'BTCUSDT', '--kline-types', '1', '--bars', '5', '--duration', '3'].concat([
          '--out',
          join(work, 'fail'),
          '--kafka',
          brokers,
          '--topic-prefix',
          prefix,
          ...extra,
        ]),
        e,
      );
    // An earlier version of the subject that the contract's kline cannot follow under BACKWARD.
    const subject = `${prefix}.kline-value`;
    const auth = {
      authorization: `Basic ${Buffer.from(`${registry.writer.username}:${registry.writer.password}`).toString('base64')}`,
      'content-type': 'application/vnd.schemaregistry.v1+json',
    };
    const old = {
      type: 'record',
      name: 'Kline',
      namespace: 'io.quoteflow',
      fields: [{ name: 'code', type: 'long' }],
    };
    expect(
      (
        await fetch(`${registry.url}/subjects/${subject}/versions`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ schema: JSON.stringify(old) }),
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await fetch(`${registry.url}/config/${subject}`, {
          method: 'PUT',
          headers: auth,
          body: JSON.stringify({ compatibility: 'BACKWARD' }),
        })
      ).status,
    ).toBe(200);

    const failEnv = (user: SchemaRegistryUser): Record<string, string> => env(user, `${TOKEN}-fail`, quiet);
    const [badPassword, unreachable, incompatible] = await Promise.all([
      sync(['--schema-registry', registry.url], failEnv({ username: 'writer', password: wrong })),
      sync(['--schema-registry', 'http://127.0.0.1:9/apis/ccompat/v7'], failEnv(registry.writer)),
      sync(['--schema-registry', registry.url], failEnv(registry.writer)),
    ]);
    expect(badPassword.code).toBe(1);
    expect(badPassword.stderr).toContain(
      `schema registry ${registry.url}: subject ${subject}: authentication refused (401)`,
    );
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(
      `schema registry http://127.0.0.1:9/apis/ccompat/v7: subject ${subject}: unreachable`,
    );
    expect(incompatible.code).toBe(1);
    expect(incompatible.stderr).toContain(
      `schema registry ${registry.url}: subject ${subject}: schema refused as incompatible`,
    );
    await expectNoSecret([badPassword, unreachable, incompatible], wrong);
    await expectNoSecret([badPassword, unreachable, incompatible], registry.writer.password);
    // quiet.log stays empty: checked when the file ends.
  }, 120_000);

  it('usage errors (exit 2): no --kafka, credentials in the URL, half the credentials', async () => {
    const secret = 'in-the-url-91c2';
    const base = ['depth', '--codes', 'BTCUSDT', '--duration', '1'];
    const [noKafka, inUrl, half] = await Promise.all([
      runQuoteflow(
        [...base, '--out', join(work, 'usage'), '--schema-registry', registry.url],
        env(registry.writer, TOKEN, quiet),
      ),
      runQuoteflow(
        [
          ...base,
          '--kafka',
          brokers,
          '--schema-registry',
          registry.url.replace('http://', `http://writer:${secret}@`),
        ],
        env(undefined, TOKEN, quiet),
      ),
      runQuoteflow([...base, '--kafka', brokers, '--schema-registry', registry.url], {
        ...env(undefined, TOKEN, quiet),
        QUOTEFLOW_SCHEMA_REGISTRY_USER: 'writer',
      }),
    ]);
    expect([noKafka.code, inUrl.code, half.code]).toEqual([2, 2, 2]);
    expect(noKafka.stderr).toContain('--schema-registry needs --kafka');
    expect(inUrl.stderr).toContain('--schema-registry: credentials do not go in the URL');
    expect(inUrl.stderr).not.toContain(secret);
    expect(half.stderr).toContain(
      'set both QUOTEFLOW_SCHEMA_REGISTRY_USER and QUOTEFLOW_SCHEMA_REGISTRY_PASSWORD',
    );
  });
});
