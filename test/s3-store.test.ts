/**
 * The S3 object store against the run's S3Proxy: a large file arrives whole through a completed
 * multipart upload, create-exclusive is If-None-Match (the second create of a key is refused and
 * leaves the first's bytes), listing starts after a key, deleting what is absent is no error; the
 * probe passes against S3Proxy and fails loudly through a proxy that drops If-None-Match. The URL
 * and addressing rules need no server.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseS3Url } from '../packages/sinks/src/internal.js';
import { S3Store, usesPathStyle } from '../packages/sinks/src/files/storage/s3-store.js';
import { freshBucket, s3Env, startNonEnforcingProxy, type TestBucket } from './support/s3.js';

let work: string;
let bucket: TestBucket;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'qf-s3-store-'));
  bucket = await freshBucket('store');
}, 300_000);
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

const storeOf = (env: Record<string, string> = { ...bucket.env() }): Promise<S3Store> =>
  S3Store.create({ bucket: bucket.name, prefix: 'p/q' }, env);

describe('S3Store on S3Proxy', () => {
  it('uploads a 20 MiB file whole (multipart), creates exclusively, lists after a key, deletes', async () => {
    const store = await storeOf();
    try {
      const big = randomBytes(20 * 1024 * 1024);
      await writeFile(join(work, 'big.bin'), big);
      await store.upload('t/big.bin', join(work, 'big.bin'));
      expect(Buffer.from((await store.read('t/big.bin'))!).equals(big)).toBe(true);
      expect(await bucket.keys('p/q/')).toEqual(['p/q/t/big.bin']);
      // A multipart upload's ETag ends in -<parts>: 3 parts of 8 MiB at most.
      const head = await bucket.client.send(
        new HeadObjectCommand({ Bucket: bucket.name, Key: 'p/q/t/big.bin' }),
      );
      expect(head.ETag).toMatch(/-3"?$/);

      expect(await store.createExclusive('t/_delta_log/00000000000000000000.json', 'first')).toBe(true);
      expect(await store.createExclusive('t/_delta_log/00000000000000000000.json', 'second')).toBe(false);
      expect(Buffer.from((await store.read('t/_delta_log/00000000000000000000.json'))!).toString()).toBe(
        'first',
      );
      await store.write('t/_delta_log/00000000000000000001.json', 'x');
      const after = await store.list('t/_delta_log/', 't/_delta_log/00000000000000000000.json');
      expect(after.map((o) => o.key)).toEqual(['t/_delta_log/00000000000000000001.json']);
      expect(after[0]!.size).toBe(1);
      expect(await store.read('t/absent')).toBeUndefined();
      await store.delete(['t/big.bin', 't/absent']);
      expect(await store.read('t/big.bin')).toBeUndefined();
      await expect(store.probeConditionalWrites()).resolves.toBeUndefined();
    } finally {
      store.close();
    }
  }, 120_000);

  it('the probe fails naming the endpoint, the bucket and If-None-Match through a server that ignores it', async () => {
    const proxy = await startNonEnforcingProxy(bucket.server);
    const store = await storeOf({ ...s3Env(bucket.server, proxy.url) });
    try {
      const err = await store.probeConditionalWrites().then(
        () => undefined,
        (e: unknown) => e as Error & { code: string },
      );
      expect(err?.code).toBe('QF_OBJECT_STORE');
      expect(err?.message).toContain('If-None-Match');
      expect(err?.message).toContain(`bucket "${bucket.name}" at ${proxy.url}`);
      expect(err?.message).not.toContain(bucket.server.secretAccessKey);
    } finally {
      store.close();
      await proxy.stop();
    }
  }, 60_000);
});

describe('s3:// URLs and addressing', () => {
  it('parses bucket and prefix, refuses what names no valid bucket', () => {
    expect(parseS3Url('s3://my-bucket/a/b/')).toEqual({ bucket: 'my-bucket', prefix: 'a/b' });
    expect(parseS3Url('S3://my.bucket')).toEqual({ bucket: 'my.bucket', prefix: '' });
    for (const bad of [
      's3://',
      's3:///x',
      's3://Upper/x',
      's3://ab',
      's3://b-/x',
      's3://bucket/a//b',
      's3://bucket/../x',
    ])
      expect(parseS3Url(bad), bad).toHaveProperty('error');
  });

  it('is path-style for an IP address or localhost, or when forced; virtual-hosted otherwise', () => {
    expect(usesPathStyle('http://127.0.0.1:9000', {})).toBe(true);
    expect(usesPathStyle('http://localhost:9000', {})).toBe(true);
    expect(usesPathStyle('http://[::1]:9000', {})).toBe(true);
    expect(usesPathStyle('https://s3.example.com', {})).toBe(false);
    expect(usesPathStyle(undefined, {})).toBe(false);
    expect(usesPathStyle('https://s3.example.com', { AWS_S3_FORCE_PATH_STYLE: 'true' })).toBe(true);
  });
});
