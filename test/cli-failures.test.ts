// Failures of the built binary that must be loud and early (contract.md, "What is checked before
// any request or file"): exit code, files written, requests in the simulator's log, time bounds.
import { mkdir, readdir, writeFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSimulator, type Simulator } from '../packages/simulator/src/index.js';
import { consumeWithKcat, privateBroker, uniquePrefix, type PrivateBroker } from './support/kafka.js';
import { dataFilesUnder, filesUnder, runQuoteflow, startQuoteflow } from './support/quoteflow-process.js';
import { stalledListener, type StalledListener } from './support/stalled-listener.js';
import { closedAddress } from '../packages/sinks/test-support/closed-address.js';

const TOKEN = 'cli-failures-token-3a9f';
/** A test of a concurrent describe that runs after the one before it, not beside it. */
const SEQUENTIAL = { concurrent: false } as const;

let sim: Simulator;
/** A simulator whose market began two days ago: two closed daily bars exist. */
let young: Simulator;
let work: string;
const env = (s: Simulator = sim): Record<string, string> => ({
  QUOTEFLOW_BASE_URL: s.url,
  QUOTEFLOW_TOKEN: TOKEN,
  QUOTEFLOW_PLAN: 'professional',
});

beforeAll(async () => {
  sim = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 31 });
  young = await startSimulator({ port: 0, tokens: { [TOKEN]: 'professional' }, seed: 32, historyDays: 2 });
  work = await mkdtemp(join(tmpdir(), 'qf-cli-failures-'));
});

afterAll(async () => {
  expect(sim.log.refused()).toEqual([]);
  await Promise.all([sim.close(), young.close()]);
  await rm(work, { recursive: true, force: true });
});

// Concurrent with the next describe's tests: first the SIGTERM test (alone here, its start-up timed)
// and the refused connection, then the test that waits, mostly idle, for the connect timeout's
// default (30 s). None sends a request.
describe.concurrent('a Kafka broker that cannot be reached', () => {
  /** Nothing listens on port 1: every connection attempt is refused. */
  const REFUSED = '127.0.0.1:1';
  /** A listener that accepts connections and never answers (a broker that stalls). */
  let stalled: StalledListener;
  beforeAll(async () => {
    stalled = await stalledListener();
  });
  afterAll(() => stalled.close());
  const commands = (out: string): string[][] => [
    ['sync', '--codes', 'BTCUSDT', '--kline-types', '1', '--bars', '5', '--out', join(out, 'sync')],
    ['depth', '--codes', 'BTCUSDT', '--out', join(out, 'depth')],
    ['suspensions', '--exchange', 'nyse', '--watch', '--out', join(out, 'suspensions')],
  ];

  it(
    'on SIGTERM while waiting for Kafka, exits 1 at once with Kafka as the cause',
    { ...SEQUENTIAL, timeout: 30_000 },
    async ({ expect }) => {
      const out = join(work, 'kafka-sigterm');
      const before = sim.log.count();
      const [args] = commands(out);
      const child = startQuoteflow([...args!, '--kafka', stalled.address], {
        ...env(),
        QUOTEFLOW_LOG_LEVEL: 'info',
      });
      // Its last line before it waits for Kafka (logged at info).
      await vi.waitFor(() => expect(child.stderr()).toContain('live refresh period from the plan'), {
        timeout: 20_000,
        interval: 50,
      });
      const signalledMs = Date.now();
      child.child.kill('SIGTERM');
      const run = await child.done;
      expect(run.code).toBe(1);
      expect(Date.now() - signalledMs).toBeLessThan(5_000);
      expect(run.stderr).toContain(stalled.address);
      expect(sim.log.count()).toBe(before);
      expect(await filesUnder(out)).toEqual([]);
    },
  );

  it(
    'that refuses connections fails sync, depth and suspensions --watch (exit 1) in seconds, naming the cause',
    { ...SEQUENTIAL, timeout: 120_000 },
    async ({ expect }) => {
      const out = join(work, 'kafka-refused');
      const before = sim.log.count();
      const [syncArgs, ...others] = commands(out).map((args) => [
        ...args,
        '--kafka',
        REFUSED,
        '--duration',
        '5',
      ]);
      // The sync's last line before the check (info), from which the refusal's time is taken: the
      // CLI's own start-up on a loaded machine is not the check's.
      const sync = startQuoteflow(syncArgs!, { ...env(), QUOTEFLOW_LOG_LEVEL: 'info' });
      const runs = await Promise.all([
        (async () => {
          await vi.waitFor(() => expect(sync.stderr()).toContain('live refresh period from the plan'), {
            timeout: 60_000,
            interval: 50,
          });
          const checkingMs = Date.now();
          const run = await sync.done;
          // Not the 30 s a stalling broker gets: 3 s of refusals and the exit.
          expect(Date.now() - checkingMs).toBeLessThan(15_000);
          return run;
        })(),
        ...others.map((args) => runQuoteflow(args, env())),
      ]);
      for (const run of runs) {
        expect(run.code).toBe(1);
        expect(run.stderr).toContain(
          `Kafka (--kafka): no Kafka broker takes connections: ${REFUSED}: connect ECONNREFUSED ${REFUSED}`,
        );
        expect(run.elapsedMs).toBeLessThan(30_000 + 15_000);
      }
      expect(sim.log.count()).toBe(before);
      expect(await filesUnder(out)).toEqual([]);
    },
  );

  it('that accepts and stalls fails sync, depth and suspensions --watch (exit 1) within 30 s, before any request or file', async ({
    expect,
  }) => {
    const out = join(work, 'kafka-away');
    const before = sim.log.count();
    const runs = await Promise.all(
      commands(out).map((args) =>
        runQuoteflow([...args, '--kafka', stalled.address, '--duration', '5'], env()),
      ),
    );
    for (const run of runs) {
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(stalled.address);
      expect(run.elapsedMs).toBeGreaterThanOrEqual(30_000); // the default connect timeout, waited out
      expect(run.elapsedMs).toBeLessThan(60_000); // no hang: the CLI's own start and stop under load
    }
    expect(sim.log.count()).toBe(before);
    expect(await filesUnder(out)).toEqual([]);
  }, 90_000);
});

// These tests run one after another (SEQUENTIAL), all of them while the Kafka-unreachable tests
// above wait out the 30 s connect timeout (the two describes are concurrent): none of them sends a
// request or writes a file outside its own folder, so the simulator's count holds for all at once.
// One at a time, so that the CLI start-ups here do not crowd out each other's time bounds.
describe.concurrent('an --out that cannot be written', () => {
  const commands = (out: string): string[][] => [
    ['backfill', '--codes', 'BTCUSDT', '--kline-type', '1', '--bars', '5', '--out', out],
    ['sync', '--codes', 'BTCUSDT', '--kline-types', '1', '--bars', '5', '--out', out, '--duration', '5'],
    ['depth', '--codes', 'BTCUSDT', '--out', out, '--duration', '5'],
    ['suspensions', '--exchange', 'nyse', '--watch', '--out', out, '--duration', '5'],
  ];

  it(
    'under /proc (where recursive mkdir never returns) is exit 2 at once, before any request',
    { ...SEQUENTIAL, timeout: 120_000 },
    async ({ expect }) => {
      const before = sim.log.count();
      for (const args of commands('/proc/quoteflow-out')) {
        const run = await runQuoteflow(args, env());
        expect(run.code).toBe(2);
        expect(run.elapsedMs).toBeLessThan(15_000);
      }
      expect(sim.log.count()).toBe(before);
    },
  );

  it(
    'below a regular file is exit 2 before any request, and the file stays as it was',
    { ...SEQUENTIAL, timeout: 120_000 },
    async ({ expect }) => {
      const dir = join(work, 'below-file'); // this test's own: the others write beside it meanwhile
      await mkdir(dir);
      const file = join(dir, 'a-file');
      await writeFile(file, 'not a directory\n');
      const before = sim.log.count();
      for (const args of commands(join(file, 'data'))) expect((await runQuoteflow(args, env())).code).toBe(2);
      expect(sim.log.count()).toBe(before);
      expect(await readFile(file, 'utf8')).toBe('not a directory\n');
      expect(await filesUnder(dir)).toEqual([file]);
    },
  );

  it(
    'with an unknown URL scheme (foo://) or an s3:// URL without a valid bucket is exit 2 naming --out, and no local folder "foo:"',
    { ...SEQUENTIAL, timeout: 120_000 },
    async ({ expect }) => {
      const cwd = join(work, 'schemes');
      await mkdir(cwd);
      const before = sim.log.count();
      // Every dataset command with an s3:// URL that names no bucket, two with a bad bucket name and
      // two with an unknown scheme; at once. (Valid s3:// destinations: test/s3-datasets.test.ts.)
      const all = (out: string): string[][] => [
        ...commands(out),
        ['compact', '--out', out],
        ['inspect', '--out', out],
        ['report', '--out', out, '--html', 'r.html'],
      ];
      const runs = [
        ...all('s3:///ds'),
        ...all('s3://Bad_Bucket/ds').filter((a) => ['backfill', 'compact'].includes(a[0]!)),
        ...all('foo://bucket/ds').filter((a) => ['sync', 'inspect'].includes(a[0]!)),
      ];
      const results = await Promise.all(runs.map((args) => runQuoteflow(args, env(), cwd)));
      for (const [i, run] of results.entries()) {
        const args = runs[i]!;
        expect(run.code, args.join(' ')).toBe(2);
        expect(run.stderr).toContain(`--out "${args[args.indexOf('--out') + 1]!}"`);
      }
      expect(sim.log.count()).toBe(before);
      expect(await readdir(cwd)).toEqual([]);
    },
  );

  it(
    'on s3:// without AWS credentials is exit 2 naming what was looked at, before any request',
    { ...SEQUENTIAL, timeout: 120_000 },
    async ({ expect }) => {
      const home = join(work, 'no-aws-home'); // no ~/.aws here
      await mkdir(home);
      const noAws = {
        ...env(),
        HOME: home,
        AWS_ACCESS_KEY_ID: '',
        AWS_SECRET_ACCESS_KEY: '',
        AWS_PROFILE: '',
        AWS_ENDPOINT_URL: '',
        AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'),
        AWS_CONFIG_FILE: join(home, 'config'),
        // The instance role is looked up over the network: not from a test (all traffic on 127.0.0.1).
        AWS_EC2_METADATA_DISABLED: 'true',
      };
      const before = sim.log.count();
      for (const args of [
        commands('s3://quoteflow-bucket/ds')[0]!,
        ['compact', '--out', 's3://quoteflow-bucket/ds'],
      ]) {
        const run = await runQuoteflow(args, noAws);
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toContain('s3://quoteflow-bucket/ds: no AWS credentials found');
        for (const name of ['AWS_ACCESS_KEY_ID unset', 'AWS_PROFILE unset', 'AWS_ENDPOINT_URL unset'])
          expect(run.stderr).toContain(name);
      }
      expect(sim.log.count()).toBe(before);
    },
  );

  it('in a pipeline file is exit 2 before any request', SEQUENTIAL, async ({ expect }) => {
    const pipeline = join(work, 'proc.yaml');
    await writeFile(
      pipeline,
      [
        'version: 1',
        'pipelines:',
        '  - source:',
        '      depth:',
        '        codes: [BTCUSDT]',
        '    sinks:',
        '      files:',
        '        out: /proc/quoteflow-out',
        'duration: 5',
        '',
      ].join('\n'),
    );
    const before = sim.log.count();
    const run = await runQuoteflow(['run', pipeline], env());
    expect(run.code).toBe(2);
    expect(sim.log.count()).toBe(before);
  });
});

describe('backfill --bars N when the service has fewer closed bars', () => {
  it('writes the ones that exist, says so at warn level, and exits 0', async () => {
    const out = join(work, 'young');
    const args = 'backfill --codes BTCUSDT --kline-type 8 --bars 5 --format ndjson --out'.split(' ');
    const run = await runQuoteflow([...args, out], env(young));
    expect(run.code).toBe(0);
    const written = await dataFilesUnder(join(out, 'kline'));
    const rows = (await Promise.all(written.map((f) => readFile(f, 'utf8'))))
      .join('')
      .split('\n')
      .filter((l) => l !== '');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThan(5);
    const warnings = run.stderr
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { level: number })
      .filter((l) => l.level === 40);
    expect(warnings.length).toBeGreaterThan(0);
  });
});

describe('a Kafka broker that goes away during a run', () => {
  // One broker of this describe's own, stopped by each test and started again by the next.
  let broker: PrivateBroker | undefined;
  let running = false;
  beforeAll(async () => {
    broker = await privateBroker();
    running = true;
  }, 120_000);
  const startBroker = async (): Promise<void> => {
    if (!running) await broker!.start();
    running = true;
  };
  afterAll(async () => {
    await broker?.dispose();
  });

  /** Starts a sync to the broker, and resolves once it delivered kline updates (read back by kcat). */
  async function syncDelivering(prefix: string, out: string, extra: string[], env: Record<string, string>) {
    const topic = `${prefix}.kline`;
    const child = startQuoteflow(
      ['sync', '--codes', 'BTCUSDT,ETHUSDT', '--kline-types', '1', '--bars', '5', '--out', out].concat(
        ['--kafka', broker!.brokers, '--topic-prefix', prefix],
        extra,
      ),
      env,
    );
    await vi.waitFor(
      async () => {
        expect(child.child.exitCode, child.stderr()).toBeNull();
        expect((await consumeWithKcat(broker!.brokers, topic).catch(() => [])).length).toBeGreaterThan(0);
      },
      { timeout: 60_000, interval: 250 },
    );
    return child;
  }

  /**
   * Stops the broker, then waits until the sync has read the service again (updates it cannot
   * deliver), or has already failed on the broker's absence (a short delivery timeout may end it
   * before its next read).
   */
  async function brokerAwayUnderSync(child: { child: { exitCode: number | null } }): Promise<void> {
    running = false;
    await broker!.stop();
    const stoppedAt = Date.now();
    await vi.waitFor(
      () =>
        expect(
          child.child.exitCode !== null || sim.log.filter({ sinceMs: stoppedAt }).some((e) => e.done),
        ).toBe(true),
      { timeout: 30_000, interval: 50 },
    );
  }

  it('on SIGTERM, exits 1 within 10 s naming Kafka as what the stop still waited for', async () => {
    await startBroker();
    const out = join(work, 'kafka-gone');
    // Let it connect and deliver, then take the broker away under it.
    const child = await syncDelivering(uniquePrefix('gone'), out, [], env());
    await brokerAwayUnderSync(child);
    const signalledMs = Date.now();
    child.child.kill('SIGTERM');
    const run = await child.done;
    expect(run.code).toBe(1);
    expect(Date.now() - signalledMs).toBeLessThan(12_000);
    expect(run.stderr).toContain(broker!.brokers);
  }, 180_000);

  it('without a signal, fails the run (exit 1) within the delivery timeout after the --duration instead of exiting 0', async () => {
    await startBroker();
    const out = join(work, 'kafka-gone-duration');
    // The delivery timeout short (the 30 s default: packages/cli/src/internal/env-seconds.test.ts).
    const child = await syncDelivering(uniquePrefix('gone-d'), out, ['--duration', '10'], {
      ...env(),
      QUOTEFLOW_KAFKA_DELIVERY_TIMEOUT_S: '2',
    });
    await brokerAwayUnderSync(child);
    const result = await child.done;
    expect(result.code).toBe(1);
    // It ended by the 2 s delivery timeout (the message below says so), not the 30 s default nor
    // never: the bound only catches a hang, since load stretches the CLI's own start and stop.
    expect(result.elapsedMs).toBeLessThan(10_000 + 30_000);
    // Exactly once (the default), a batch, the checkpoint's commit or the transaction gives up
    // first, whichever meets the timeout first: each names the delivery timeout.
    expect(result.stderr).toMatch(
      /not acknowledged by the broker: no acknowledgement within deliveryTimeoutMs = 2000 ms|the commit got no answer: .*\(deliveryTimeoutMs = 2000 ms\)|the transaction was not committed: .*\(deliveryTimeoutMs = 2000 ms\)/,
    );
    expect(result.stderr).toContain(broker!.brokers);
  }, 180_000);
});

describe('codes the service does not know', () => {
  it('among known ones: exit 3 naming them, before any file is written', async () => {
    const out = join(work, 'mixed-codes');
    const before = sim.log.count({ endpoint: 'kline' });
    const r = await runQuoteflow(
      ['backfill', '--codes', 'BTCUSDT,NOPE.US', '--kline-type', '1', '--bars', '10', '--out', out],
      env(),
    );
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/the service does not serve NOPE\.US: unknown to the service/);
    // backfill reads through /kline: the error names neither the check's endpoint nor the good code.
    expect(r.stderr).not.toMatch(/batch-kline/);
    expect(r.stderr).not.toMatch(/does not serve[^\n]*BTCUSDT/);
    expect(await filesUnder(out).catch(() => [])).toEqual([]);
    expect(sim.log.count({ endpoint: 'kline' })).toBe(before);
  });
});

describe('a --base-url where no service answers', () => {
  it('is exit 1 within seconds naming the URL and the refused connection, not 300 s of retries', async () => {
    const url = `http://${await closedAddress()}`;
    const out = join(work, 'no-service');
    const runs = await Promise.all(
      [
        ['backfill', '--codes', 'BTCUSDT', '--kline-type', '1', '--bars', '5', '--out', out],
        ['sync', '--codes', 'BTCUSDT', '--kline-types', '1', '--bars', '5', '--out', out, '--duration', '60'],
      ].map((args) => runQuoteflow([...args, '--base-url', url], env())),
    );
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain(
        `no service at ${url}: connect ECONNREFUSED ${url.slice('http://'.length)}`,
      );
      expect(run.stderr).not.toContain('request.retry'); // no retry warnings
      // --retry-budget (300 s) is for a service that answered before; the bound allows the CLI's
      // start-up on a loaded machine.
      expect(run.elapsedMs).toBeLessThan(60_000);
    }
    expect(await filesUnder(out)).toEqual([]);
  }, 120_000);
});
