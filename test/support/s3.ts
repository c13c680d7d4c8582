/**
 * The object storage tests' S3-compatible server: a real S3Proxy (Maven Central
 * `org.gaul:s3proxy:4.1.0`, jar-with-dependencies, fetched by scripts/s3proxy/setup.sh), its
 * `filesystem` backend in a temporary directory, on 127.0.0.1, with AWS signatures checked
 * (`aws-v2-or-v4`, a test identity and credential made for the run): started once per run on first
 * use (the `s3` shared fixture) and stopped when the run ends. S3Proxy enforces conditional writes
 * (`If-None-Match: *` on an existing key: 412), which quoteflow's Delta log commits rely on
 * (test/s3proxy-fixture.test.ts checks it).
 *
 * A test shares the server by bucket: `freshBucket()` makes one of its own. A quoteflow child
 * process reaches it through `bucket.env()` (`AWS_ENDPOINT_URL`, credentials, region); the
 * Python Delta readers (python.ts) with the request's `s3: bucket.server`. `startNonEnforcingProxy()` puts a server in
 * front of it that ignores conditional writes, for the "refuses to commit" tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { freePort } from './redis-server.js';
import { inVitest, sharedFixture } from './shared-fixtures.js';

/** The run's S3-compatible server: where it listens and the identity it accepts. */
export interface S3Server {
  /** `http://127.0.0.1:PORT` (path-style addressing: `ENDPOINT/BUCKET/KEY`). */
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly region: string;
  /** From spawning the JVM to the first signed request answered, ms. */
  readonly startMs: number;
}

/** What a child `quoteflow` process needs in its environment to reach the server. */
export interface S3Env {
  readonly AWS_ENDPOINT_URL: string;
  readonly AWS_ACCESS_KEY_ID: string;
  readonly AWS_SECRET_ACCESS_KEY: string;
  readonly AWS_REGION: string;
}

const REPO_ROOT = join(import.meta.dirname, '..', '..');
/** PUTs in flight at once in `TestBucket.upload`. */
const UPLOAD_CONCURRENCY = 8;
/** How long S3Proxy may take to answer its first request (it starts in well under 5 s). */
const START_TIMEOUT_MS = 60_000;

/**
 * The server a test uses: the run's shared S3Proxy (started on the first ask of the run). Outside
 * vitest (a bench or a script), a fresh one of {@link startS3Proxy}, stopped when the process exits.
 */
export async function testS3(): Promise<S3Server> {
  if (inVitest()) return sharedFixture('s3');
  const own = await startS3Proxy();
  process.once('exit', () => own.kill());
  return own.value;
}

/** A client of `server` (path-style, its credentials; one attempt per call unless `maxAttempts`). */
export function s3Client(server: S3Server, opts: { endpoint?: string; maxAttempts?: number } = {}): S3Client {
  return new S3Client({
    endpoint: opts.endpoint ?? server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    maxAttempts: opts.maxAttempts ?? 3,
  });
}

/** The environment of a child process that should use `server` (or `endpoint`, e.g. a proxy's). */
export function s3Env(server: S3Server, endpoint = server.endpoint): S3Env {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_ACCESS_KEY_ID: server.accessKeyId,
    AWS_SECRET_ACCESS_KEY: server.secretAccessKey,
    AWS_REGION: server.region,
  };
}

/** A bucket of the test's own on the run's server. */
export interface TestBucket {
  readonly name: string;
  readonly server: S3Server;
  readonly client: S3Client;
  /** `s3://BUCKET/PREFIX` (`s3://BUCKET` without a prefix). */
  url(prefix?: string): string;
  /** Every key under `prefix` (all pages), sorted. */
  keys(prefix?: string): Promise<string[]>;
  /** An object's bytes (throws the SDK's NoSuchKey when absent). */
  read(key: string): Promise<Buffer>;
  /** Copies every file under `dir` to `PREFIX/<relative path>`; resolves with the keys written. */
  upload(dir: string, prefix: string): Promise<string[]>;
  /** A child quoteflow process's environment for this server ({@link s3Env}). */
  env(): S3Env;
}

let buckets = 0;

/** Creates a bucket with a unique name (`qf-HINT-…`) on the run's server (or on `on`). */
export async function freshBucket(hint = 'test', on?: S3Server): Promise<TestBucket> {
  const server = on ?? (await testS3());
  const client = s3Client(server);
  const tag = hint
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, 24);
  const name = `qf-${tag}-${process.pid}-${++buckets}-${randomBytes(3).toString('hex')}`.replace(/-+/g, '-');
  await client.send(new CreateBucketCommand({ Bucket: name }));
  return bucketOf(name, server, client);
}

function bucketOf(name: string, server: S3Server, client: S3Client): TestBucket {
  return {
    name,
    server,
    client,
    url: (prefix) => (prefix === undefined || prefix === '' ? `s3://${name}` : `s3://${name}/${prefix}`),
    keys: (prefix) => listKeys(client, name, prefix),
    read: async (key) => {
      const got = await client.send(new GetObjectCommand({ Bucket: name, Key: key }));
      return Buffer.from(await got.Body!.transformToByteArray());
    },
    upload: (dir, prefix) => uploadDir(client, name, dir, prefix),
    env: () => s3Env(server),
  };
}

async function listKeys(client: S3Client, bucket: string, prefix?: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) keys.push(o.Key!);
    token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
  } while (token !== undefined);
  return keys.sort();
}

async function uploadDir(client: S3Client, bucket: string, dir: string, prefix: string): Promise<string[]> {
  const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile());
  const keys = files.map((f) =>
    [prefix.replace(/\/+$/, ''), relative(dir, join(f.parentPath, f.name)).split(sep).join('/')]
      .filter((p) => p !== '')
      .join('/'),
  );
  // A few PUTs at a time (a day of checkpoints is thousands of small files).
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < files.length; i = next++) {
      const path = join(files[i]!.parentPath, files[i]!.name);
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: keys[i], Body: await readFile(path) }));
    }
  };
  await Promise.all(Array.from({ length: UPLOAD_CONCURRENCY }, worker));
  return keys.sort();
}

/**
 * Starts S3Proxy (scripts/s3proxy/run.sh) on a free port of 127.0.0.1, `filesystem` backend in a
 * temporary directory, signatures checked, and resolves once a signed request is answered.
 * `kill()` stops it at once (for a process's exit); `stop()` waits and removes the directory.
 */
export async function startS3Proxy(): Promise<{
  value: S3Server;
  stop: () => Promise<void>;
  kill: () => void;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'qf-s3proxy-'));
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const identity = { accessKeyId: 'qf-test', secretAccessKey: `s-${randomBytes(16).toString('hex')}` };
  const props = join(dir, 's3proxy.properties');
  await mkdir(join(dir, 'data'));
  await writeFile(
    props,
    [
      `s3proxy.endpoint=${endpoint}`,
      's3proxy.authorization=aws-v2-or-v4',
      `s3proxy.identity=${identity.accessKeyId}`,
      `s3proxy.credential=${identity.secretAccessKey}`,
      'jclouds.provider=filesystem',
      `jclouds.filesystem.basedir=${join(dir, 'data')}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  await chmod(props, 0o600);
  const t0 = Date.now();
  const child: ChildProcess = spawn('bash', [join(REPO_ROOT, 'scripts', 's3proxy', 'run.sh'), props], {
    // stdin stays open: run.sh stops S3Proxy when it closes (this process gone, however it died).
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (d: string): void => void (log = (log + d).slice(-65_536));
  child.stdout!.setEncoding('utf8').on('data', keep);
  child.stderr!.setEncoding('utf8').on('data', keep);
  const value: S3Server = { endpoint, region: 'us-east-1', ...identity, startMs: 0 };
  const kill = (): void => void child.kill('SIGTERM');
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilAnswering(value, child, () => log);
  } catch (err) {
    await stop();
    throw err;
  }
  return { value: { ...value, startMs: Date.now() - t0 }, stop, kill };
}

/** Sends signed ListBuckets until one is answered; fails early when `child` exits. */
async function waitUntilAnswering(server: S3Server, child: ChildProcess, log: () => string): Promise<void> {
  const client = s3Client(server, { maxAttempts: 1 });
  const deadline = Date.now() + START_TIMEOUT_MS;
  try {
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`S3Proxy exited (${child.exitCode ?? child.signalCode}) before serving:\n${log()}`);
      try {
        await client.send(new ListBucketsCommand({}));
        return;
      } catch (err) {
        if (Date.now() > deadline)
          throw new Error(
            `S3Proxy did not answer on ${server.endpoint} within ${START_TIMEOUT_MS} ms:\n${log()}`,
            {
              cause: err,
            },
          );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    client.destroy();
  }
}

/** A server in front of S3Proxy that does not enforce conditional writes. */
export interface NonEnforcingProxy {
  /** `http://127.0.0.1:PORT`: use it as the endpoint (`s3Env(server, proxy.url)`). */
  readonly url: string;
  /** How many requests arrived with an `If-None-Match` header (dropped before forwarding). */
  readonly stripped: number;
  stop(): Promise<void>;
}

/**
 * Starts an HTTP proxy on 127.0.0.1 (node:http, real sockets) in front of `server` that drops the
 * `If-None-Match` header of every request (so a conditional PUT on an existing key overwrites it,
 * as on a server that ignores the condition, e.g. s3rver) and signs the request again for what is
 * forwarded (AWS signature v4 covers the header; the proxy knows the test credentials).
 */
export async function startNonEnforcingProxy(server: S3Server): Promise<NonEnforcingProxy> {
  const target = new URL(server.endpoint);
  const signer = new SignatureV4({
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
    region: server.region,
    service: 's3',
    sha256: NodeSha256,
    uriEscapePath: false, // S3 signs the path as sent
    applyChecksum: false, // the client's x-amz-content-sha256 stays the payload hash
  });
  let stripped = 0;
  const proxy: Server = createServer((req, res) => {
    void forward(req, target, signer, () => stripped++).then(
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
      (err: unknown) => res.writeHead(502).end(String(err)),
    );
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    get stripped() {
      return stripped;
    },
    stop: async () => {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}

/** Forwards `req` to `target` without `If-None-Match`, signed again; resolves with the response. */
async function forward(
  req: IncomingMessage,
  target: URL,
  signer: SignatureV4,
  onStrip: () => void,
): Promise<IncomingMessage> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || ['authorization', 'x-amz-date', 'connection', 'expect'].includes(k)) continue;
    if (k === 'if-none-match') {
      onStrip();
      continue;
    }
    headers[k] = Array.isArray(v) ? v.join(',') : v;
  }
  const url = new URL(req.url ?? '/', target);
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const had = query[k];
    query[k] = had === undefined ? v : [...(Array.isArray(had) ? had : [had]), v];
  }
  const signed = await signer.sign({
    method: req.method ?? 'GET',
    protocol: 'http:',
    hostname: target.hostname,
    port: Number(target.port),
    path: (req.url ?? '/').split('?')[0]!,
    query,
    headers,
    body,
  });
  return new Promise((resolve, reject) => {
    const up = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: signed.headers,
      },
      resolve,
    );
    up.once('error', reject);
    up.end(body);
  });
}

/** SHA-256 and HMAC-SHA256 from node:crypto in the shape the signer takes. */
class NodeSha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): string | Buffer {
  if (typeof data === 'string') return data;
  return ArrayBuffer.isView(data)
    ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    : Buffer.from(data);
}
