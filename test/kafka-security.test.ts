// Kafka as production clusters run it (issue 25): the built CLI and the library against the test
// broker's secured listeners (scripts/kafka/broker-security.properties): SASL_SSL with PLAIN and
// SCRAM-SHA-512, mTLS, a certificate for the wrong name, a user without ACLs. Records are read back
// by kcat with the same -X properties; every failure exits 1 naming the broker and what went wrong,
// before any request to the service; the passwords appear in no output, log, metric or file.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { KafkaKlineSink, KafkaSink, type KafkaDriverName } from '../packages/sinks/src/index.js';
import {
  consumeWithKcat,
  kafkaBrokers,
  kafkaSecureListeners,
  partitionCount,
  uniquePrefix,
} from './support/kafka.js';
import {
  dashX,
  mtlsProperties,
  saslSslProperties,
  testUser,
  type SecureListeners,
} from './support/kafka-listeners.js';
import { filesUnder, runQuoteflow, startQuoteflow } from './support/quoteflow-process.js';
import { freePort } from './support/redis-server.js';
import { expectedKlineValue, klineBar } from './support/kafka-kline-bars.js';
import kafkajs from 'kafkajs';

const TOKEN = 'kafka-security-token-4c2a';
const scram = testUser('qf-scram');
const plain = testUser('qf-plain');
const denied = testUser('qf-denied');
const SECRETS = [scram.password, plain.password, denied.password];

let sim: Simulator;
let work: string;
let listeners: SecureListeners;
const env = (extra: Record<string, string> = {}): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: sim.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'professional',
  ...extra,
});

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 25 });
  work = await mkdtemp(join(tmpdir(), 'qf-kafka-security-'));
  listeners = await kafkaSecureListeners();
});

afterAll(async () => {
  await sim?.close();
  await rm(work, { recursive: true, force: true });
});

/** Every secret that must not show, searched in `text`. */
function expectNoSecret(text: string, where: string): void {
  for (const secret of SECRETS) expect(text.includes(secret), `${where} holds a password`).toBe(false);
}

/** Runs `work` with a kafkajs admin on the PLAINTEXT listener (User:ANONYMOUS, a super user). */
async function asAdmin(work: (admin: kafkajs.Admin) => Promise<void>): Promise<void> {
  const admin = new kafkajs.Kafka({
    brokers: [await kafkaBrokers()],
    logLevel: kafkajs.logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    await work(admin);
  } finally {
    await admin.disconnect();
  }
}

async function scrapeMetrics(port: number): Promise<string> {
  for (let i = 0; i < 200; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      if (res.ok) return await res.text();
    } catch {
      // not serving yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no /metrics on ${port}`);
}

describe('the CLI over secured listeners', () => {
  it('sync (SCRAM-SHA-512 from --kafka-config with ${NAME}), depth (PLAIN by -X) and suspensions --watch (mTLS) deliver; kcat reads them back with the same properties; no password anywhere', async () => {
    const sasl = listeners.saslSsl;
    const prefix = uniquePrefix('sec');
    const config = join(work, 'client.properties');
    await writeFile(
      config,
      [
        '# a secured cluster, as in the README',
        `bootstrap.servers=${sasl}`,
        'security.protocol=SASL_SSL',
        'sasl.mechanism=SCRAM-SHA-512',
        `sasl.username=${scram.username}`,
        'sasl.password=${QF_KAFKA_PASSWORD}',
        `ssl.ca.location=${join(listeners.tlsDir, 'ca.pem')}`,
        'client.id=qf-sec-test',
        '',
      ].join('\n'),
    );
    const metricsPort = await freePort();
    // 20 s: at 8 a sync on a loaded machine (load 20) sometimes stopped before its backfill was done.
    const sync = startQuoteflow(
      [
        ...'sync --codes BTCUSDT --kline-types 1 --bars 5 --duration 20 --out'.split(' '),
        join(work, 'sync'),
        '--kafka-config',
        config,
        '--topic-prefix',
        `${prefix}-s`,
        '--metrics-port',
        String(metricsPort),
      ],
      env({ QF_KAFKA_PASSWORD: scram.password }),
    );
    const metrics = await scrapeMetrics(metricsPort);
    // Depth and the watch run 10 s beside the sync's 20 (no longer in all): at 3, under load, a depth
    // run's SASL_SSL log-in took its whole duration and it delivered nothing.
    const [syncRun, depthRun, watchRun] = await Promise.all([
      sync.done,
      runQuoteflow(
        [
          ...'depth --codes BTCUSDT,ETHUSDT --duration 10'.split(' '),
          ...dashX({ 'bootstrap.servers': sasl, ...saslSslProperties(listeners, plain) }),
          '--topic-prefix',
          `${prefix}-d`,
        ],
        env(),
      ),
      runQuoteflow(
        [
          ...'suspensions --exchange nyse --watch --format ndjson --duration 10 --kafka'.split(' '),
          listeners.mtls,
          ...dashX(mtlsProperties(listeners)),
          '--topic-prefix',
          `${prefix}-w`,
          '--out',
          join(work, 'watch'),
        ],
        env(),
      ),
    ]);
    for (const [name, r] of [
      ['sync', syncRun],
      ['depth', depthRun],
      ['watch', watchRun],
    ] as const) {
      expect(r.code, `${name}: ${r.stderr}`).toBe(0);
      expectNoSecret(r.stdout + r.stderr, `${name}'s output`);
    }
    // The sync's K-lines went exactly once (Kafka transactions over SASL_SSL), not the fallback.
    expect(syncRun.stderr).not.toContain('cannot run transactions');
    expectNoSecret(metrics, 'the metrics scrape');
    for (const file of await filesUnder(work))
      if (file !== config) expectNoSecret(await readFile(file, 'latin1'), file);
    // Read back by kcat (librdkafka) with the same properties, each over its own login.
    const klines = await consumeWithKcat(
      sasl,
      `${prefix}-s.kline`,
      30_000,
      'read_committed',
      saslSslProperties(listeners, scram),
    );
    expect(klines.some((m) => m.key === 'BTCUSDT' && JSON.parse(m.value).final === true)).toBe(true);
    const depth = await consumeWithKcat(
      sasl,
      `${prefix}-d.depth`,
      30_000,
      undefined,
      saslSslProperties(listeners, plain),
    );
    expect(new Set(depth.map((m) => m.key))).toEqual(new Set(['BTCUSDT', 'ETHUSDT']));
    const watch = await consumeWithKcat(
      listeners.mtls,
      `${prefix}-w.suspension`,
      30_000,
      undefined,
      mtlsProperties(listeners),
    );
    expect(watch.length).toBeGreaterThan(0);
    expect(JSON.parse(watch[0]!.value).exchange).toBe('nyse');
  });

  it('creates topics with the partitions and configs asked for, and with --kafka-create-topics false fails on a missing one (exit 1, before any request)', async () => {
    const prefix = uniquePrefix('sec-topics');
    const created = await runQuoteflow(
      [
        ...'depth --codes BTCUSDT --duration 1 --kafka-partitions 3 --kafka-topic-config cleanup.policy=compact --kafka-topic-config min.insync.replicas=1 --topic-prefix'.split(
          ' ',
        ),
        prefix,
        ...dashX({ 'bootstrap.servers': listeners.saslSsl, ...saslSslProperties(listeners, scram) }),
      ],
      env(),
    );
    expect(created.code, created.stderr).toBe(0);
    const plaintext = await kafkaBrokers();
    expect(await partitionCount(plaintext, `${prefix}.depth`)).toBe(3);
    const admin = new kafkajs.Kafka({ brokers: [plaintext], logLevel: kafkajs.logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [
          {
            type: kafkajs.ConfigResourceTypes.TOPIC,
            name: `${prefix}.depth`,
            configNames: ['cleanup.policy'],
          },
        ],
      });
      expect(described.resources[0]?.configEntries[0]?.configValue).toBe('compact');
    } finally {
      await admin.disconnect();
    }
    const before = sim.log.count({});
    const missing = await runQuoteflow(
      [
        ...'depth --codes BTCUSDT --duration 5 --kafka-create-topics false --topic-prefix'.split(' '),
        `${prefix}-none`,
        ...dashX({ 'bootstrap.servers': listeners.saslSsl, ...saslSslProperties(listeners, scram) }),
      ],
      env(),
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`topic ${prefix}-none.depth does not exist at ${listeners.saslSsl}`);
    expect(sim.log.count({})).toBe(before);
  });

  it('with topic creation off, an exactly-once sync also needs P.kline.watermarks (exit 1 naming it); at least once it does not', async () => {
    const prefix = uniquePrefix('sec-provisioned');
    await asAdmin(async (admin) => {
      await admin.createTopics({
        topics: [{ topic: `${prefix}.kline`, numPartitions: 2 }],
        waitForLeaders: true,
      });
    });
    const args = [
      ...'sync --codes BTCUSDT --kline-types 1 --bars 2 --duration 3 --kafka-create-topics false --out'.split(
        ' ',
      ),
      join(work, prefix),
      '--topic-prefix',
      prefix,
      ...dashX({ 'bootstrap.servers': listeners.saslSsl, ...saslSslProperties(listeners, scram) }),
    ];
    const before = sim.log.count({});
    const exactly = await runQuoteflow(args, env());
    expect(exactly.code, exactly.stderr).toBe(1);
    expect(exactly.stderr).toContain(
      `topic ${prefix}.kline.watermarks does not exist at ${listeners.saslSsl}`,
    );
    expect(exactly.stderr).toContain('or --kafka-delivery at-least-once');
    expect(sim.log.count({})).toBe(before);
    const atLeast = await runQuoteflow([...args, '--kafka-delivery', 'at-least-once'], env());
    expect(atLeast.code, atLeast.stderr).toBe(0);
  });
});

describe('a pipeline file with a kafka: block of tls: and sasl:', () => {
  const EXAMPLE = join(import.meta.dirname, '..', 'examples', 'pipelines', 'depth-to-secured-kafka.yaml');
  const exampleEnv = (prefix: string, extra: Record<string, string> = {}) =>
    env({
      KAFKA_BROKERS: listeners.saslSsl,
      KAFKA_CA_FILE: join(listeners.tlsDir, 'ca.pem'),
      KAFKA_USERNAME: scram.username,
      KAFKA_PASSWORD: scram.password,
      TOPIC_PREFIX: prefix,
      DURATION: '3',
      ...extra,
    });

  it('examples/pipelines/depth-to-secured-kafka.yaml produces over SASL_SSL into a topic of 3 partitions', async () => {
    const prefix = uniquePrefix('sec-pipeline');
    const r = await runQuoteflow(['run', EXAMPLE], exampleEnv(prefix));
    expect(r.code, r.stderr).toBe(0);
    expectNoSecret(r.stdout + r.stderr, 'the output');
    expect(await partitionCount(await kafkaBrokers(), `${prefix}.depth`)).toBe(3);
    const read = await consumeWithKcat(
      listeners.saslSsl,
      `${prefix}.depth`,
      30_000,
      undefined,
      saslSslProperties(listeners, scram),
    );
    expect(read.length).toBeGreaterThan(0);
    for (const m of read) expect(m.key).toBe((JSON.parse(m.value) as { code: string }).code);
  });

  it('names the field of a bad setting (exit 2) and a refused login (exit 1)', async () => {
    const prefix = uniquePrefix('sec-pipeline-bad');
    const file = join(work, 'oauth.yaml');
    await writeFile(
      file,
      (await readFile(EXAMPLE, 'utf8')).replace('mechanism: SCRAM-SHA-512', 'mechanism: OAUTHBEARER'),
    );
    const oauth = await runQuoteflow(['run', file], exampleEnv(prefix));
    expect(oauth.code, oauth.stderr).toBe(2);
    expect(oauth.stderr).toContain('pipelines[0].sinks.kafka.sasl.mechanism: OAUTHBEARER is not supported');
    const refused = await runQuoteflow(
      ['run', EXAMPLE],
      exampleEnv(prefix, { KAFKA_PASSWORD: 'wrong-Pw-123456' }),
    );
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(
      `Kafka (pipelines[0].sinks.kafka): authentication failed for user qf-scram with SCRAM-SHA-512 at ${listeners.saslSsl}`,
    );
    expect(refused.stderr).not.toContain('wrong-Pw-123456');
  });
});

describe('loud, specific failures: exit 1 within 30 s, naming the broker, before any request', () => {
  const cases: [string, () => string[], (l: SecureListeners) => string][] = [
    [
      'a wrong password',
      () =>
        dashX({
          'bootstrap.servers': listeners.saslSsl,
          ...saslSslProperties(listeners, { ...scram, password: 'not-the-Pw-0000' }),
        }),
      (l) => `authentication failed for user qf-scram with SCRAM-SHA-512 at ${l.saslSsl}`,
    ],
    [
      'an unknown user',
      () =>
        dashX({
          'bootstrap.servers': listeners.saslSsl,
          ...saslSslProperties(listeners, { ...scram, username: 'qf-nobody' }),
        }),
      (l) => `authentication failed for user qf-nobody with SCRAM-SHA-512 at ${l.saslSsl}`,
    ],
    [
      'an untrusted certificate',
      () =>
        dashX({
          'bootstrap.servers': listeners.saslSsl,
          ...saslSslProperties(listeners, scram),
          'ssl.ca.location': join(listeners.tlsDir, 'other-ca.pem'),
        }),
      (l) => `certificate of ${l.saslSsl} is not trusted by ssl.ca.location`,
    ],
    [
      'a certificate for another host name',
      () =>
        dashX({
          'bootstrap.servers': listeners.wrongName,
          'security.protocol': 'SSL',
          'ssl.ca.location': join(listeners.tlsDir, 'ca.pem'),
        }),
      (l) => `certificate of ${l.wrongName} does not name that host`,
    ],
    [
      'no client certificate on the mTLS listener',
      () =>
        dashX({
          'bootstrap.servers': listeners.mtls,
          'security.protocol': 'SSL',
          'ssl.ca.location': join(listeners.tlsDir, 'ca.pem'),
        }),
      (l) => `${l.mtls} refused the TLS handshake: it wants a client certificate`,
    ],
    [
      'a user the ACLs let do nothing',
      () => dashX({ 'bootstrap.servers': listeners.saslSsl, ...saslSslProperties(listeners, denied) }),
      () => `user qf-denied may not write or create`,
    ],
  ];
  // Concurrent: none of them may send a request, so the simulator's count holds for all at once.
  it.concurrent.each(cases)('%s', async (_, args, message) => {
    const before = sim.log.count({});
    const r = await runQuoteflow(
      [
        ...'depth --codes BTCUSDT --duration 20 --topic-prefix'.split(' '),
        uniquePrefix('sec-fail'),
        ...args(),
      ],
      env(),
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(message(listeners));
    expect(r.elapsedMs).toBeLessThan(30_000);
    expect(sim.log.count({})).toBe(before);
    expectNoSecret(r.stdout + r.stderr, 'the output');
  });

  it.concurrent.each([
    [
      ['-X', 'sasl.mechanism=OAUTHBEARER', '-X', 'security.protocol=SASL_SSL'],
      'OAUTHBEARER is not supported',
    ],
    [['-X', 'sasl.kerberos.principal=x'], 'Kafka property sasl.kerberos.principal: unknown Kafka property'],
    [
      ['-X', 'security.protocol=TLS'],
      'Kafka property security.protocol: must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL',
    ],
    [
      ['-X', 'security.protocol=SSL', '-X', 'ssl.ca.location=/nonexistent/ca.pem'],
      'Kafka property ssl.ca.location: cannot read',
    ],
  ])('refuses %j with exit 2 naming the property, before any connection', async (args, message) => {
    const r = await runQuoteflow(['depth', '--codes', 'BTCUSDT', '--kafka', '127.0.0.1:1', ...args], env());
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(message);
  });
});

describe('a topic the user may see but not write', () => {
  it('a topic the user may see but not write: exit 1 at the first delivery, naming the user and the topic', async () => {
    const prefix = uniquePrefix('sec-acl');
    const topic = `${prefix}.depth`;
    await asAdmin(async (admin) => {
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
      // DESCRIBE only: the check at start sees the topic; producing to it is refused.
      await admin.createAcls({
        acl: [
          {
            resourceType: kafkajs.AclResourceTypes.TOPIC,
            resourceName: topic,
            resourcePatternType: kafkajs.ResourcePatternTypes.LITERAL,
            principal: `User:${denied.username}`,
            host: '*',
            operation: kafkajs.AclOperationTypes.DESCRIBE,
            permissionType: kafkajs.AclPermissionTypes.ALLOW,
          },
        ],
      });
    });
    const r = await runQuoteflow(
      [
        ...'depth --codes BTCUSDT --duration 20 --kafka-create-topics false --topic-prefix'.split(' '),
        prefix,
        ...dashX({ 'bootstrap.servers': listeners.saslSsl, ...saslSslProperties(listeners, denied) }),
      ],
      env(),
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`user qf-denied may not create or write ${topic}`);
    expect(r.stderr).toContain(topic);
    expect(r.elapsedMs).toBeLessThan(30_000);
    expectNoSecret(r.stdout + r.stderr, 'the output');
  });

  it('a user that may write but not use transactional ids: an unset --kafka-delivery falls back to at least once, with a warning naming why', async () => {
    const prefix = uniquePrefix('sec-notx');
    await asAdmin(async (admin) => {
      await admin.createTopics({
        topics: [{ topic: `${prefix}.kline` }, { topic: `${prefix}.kline.watermarks` }],
        waitForLeaders: true,
      });
      // Everything on the topics of the prefix, nothing on transactional ids.
      await admin.createAcls({
        acl: (['DESCRIBE', 'READ', 'WRITE'] as const).map((op) => ({
          resourceType: kafkajs.AclResourceTypes.TOPIC,
          resourceName: prefix,
          resourcePatternType: kafkajs.ResourcePatternTypes.PREFIXED,
          principal: `User:${denied.username}`,
          host: '*',
          operation: kafkajs.AclOperationTypes[op],
          permissionType: kafkajs.AclPermissionTypes.ALLOW,
        })),
      });
    });
    const r = await runQuoteflow(
      [
        ...'sync --codes BTCUSDT --kline-types 1 --bars 3 --duration 5 --kafka-create-topics false --out'.split(
          ' ',
        ),
        join(work, prefix),
        '--topic-prefix',
        prefix,
        ...dashX({ 'bootstrap.servers': listeners.saslSsl, ...saslSslProperties(listeners, denied) }),
      ],
      env(),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('cannot run transactions: delivering K-lines at least once');
    // kafkajs hides the broker's TRANSACTIONAL_ID_AUTHORIZATION_FAILED behind "no coordinator".
    expect(r.stderr).toContain('user qf-denied may not be allowed that transactional id');
    expectNoSecret(r.stdout + r.stderr, 'the output');
    const read = await consumeWithKcat(
      listeners.saslSsl,
      `${prefix}.kline`,
      30_000,
      undefined,
      saslSslProperties(listeners, scram),
    );
    expect(read.some((m) => (JSON.parse(m.value) as { final: boolean }).final)).toBe(true);
  });
});

describe('the library over SASL_SSL', () => {
  it.each(['kafkajs', 'platformatic'] as KafkaDriverName[])(
    'KafkaKlineSink commits exactly once over SCRAM-SHA-512 with %s; kcat reads the committed bars',
    async (driver) => {
      const prefix = uniquePrefix(`sec-eos-${driver}`);
      const security = {
        tls: { ca: await readFile(join(listeners.tlsDir, 'ca.pem')) },
        sasl: { mechanism: 'SCRAM-SHA-512' as const, username: scram.username, password: scram.password },
      };
      const sink = await KafkaKlineSink.open({
        brokers: listeners.saslSsl,
        topicPrefix: prefix,
        driver,
        transactionalId: `${prefix}-tx`,
        ...security,
      });
      for (let i = 0; i < 3; i++) sink.write(klineBar('BTCUSDT', i));
      await sink.checkpoint();
      await sink.close();
      const read = await consumeWithKcat(
        listeners.saslSsl,
        `${prefix}.kline`,
        30_000,
        'read_committed',
        saslSslProperties(listeners, scram),
      );
      expect(read.map((m) => JSON.parse(m.value) as unknown)).toEqual(
        [0, 1, 2].map((i) => expectedKlineValue('BTCUSDT', i)),
      );
      // The driver's plain sink over mTLS too.
      const plainSink = new KafkaSink({
        brokers: listeners.mtls,
        topicPrefix: `${prefix}-mtls`,
        driver,
        tls: {
          ca: await readFile(join(listeners.tlsDir, 'ca.pem')),
          cert: await readFile(join(listeners.tlsDir, 'client.pem')),
          key: await readFile(join(listeners.tlsDir, 'client.key')),
          keyPassword: await readFile(join(listeners.tlsDir, 'client.key.password'), 'utf8'),
        },
      });
      await plainSink.write(klineBar('ETHUSDT', 0));
      await plainSink.close();
      const viaMtls = await consumeWithKcat(
        listeners.mtls,
        `${prefix}-mtls.kline`,
        30_000,
        undefined,
        mtlsProperties(listeners),
      );
      expect(viaMtls.map((m) => JSON.parse(m.value) as unknown)).toEqual([expectedKlineValue('ETHUSDT', 0)]);
    },
  );
});
