/**
 * The object storage tests' server (test/support/s3.ts: the run's S3Proxy 4.1.0, filesystem
 * backend, signatures checked) does what quoteflow's Delta log on S3 relies on: a conditional PUT
 * (`If-None-Match: *`) creates a key once and is refused (412) when the key exists, also when
 * many race for it; a listing shows a key right after its PUT; unsigned or wrongly signed requests
 * are refused. And the non-enforcing proxy in front of it really drops the condition, so the
 * "must refuse to commit" tests meet a server that ignores it.
 */
import { Readable } from 'node:stream';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshBucket, s3Client, startNonEnforcingProxy, type TestBucket } from './support/s3.js';

/** The HTTP status of a failed SDK call (or 200 when it succeeded). */
async function statusOf(p: Promise<{ $metadata: { httpStatusCode?: number } }>): Promise<number | undefined> {
  try {
    return (await p).$metadata.httpStatusCode;
  } catch (err) {
    return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  }
}

describe('the S3Proxy fixture', () => {
  let bucket: TestBucket;
  beforeAll(async () => {
    bucket = await freshBucket('fixture');
  });

  const put = (key: string, body: string, conditional: boolean, client: S3Client = bucket.client) =>
    client.send(
      new PutObjectCommand({
        Bucket: bucket.name,
        Key: key,
        Body: body,
        ...(conditional ? { IfNoneMatch: '*' } : {}),
      }),
    );

  it('creates a key with a conditional PUT once, and refuses the second with 412', async () => {
    const key = 'table/_delta_log/00000000000000000000.json';
    expect(await statusOf(put(key, 'first', true))).toBe(200);
    expect(await statusOf(put(key, 'second', true))).toBe(412);
    expect((await bucket.read(key)).toString()).toBe('first');
    // Without the condition, a PUT overwrites (the server is not refusing every second PUT).
    expect(await statusOf(put(key, 'third', false))).toBe(200);
    expect((await bucket.read(key)).toString()).toBe('third');
  });

  it('lets exactly one of 20 racing conditional PUTs create a key, and keeps its body', async () => {
    const client = s3Client(bucket.server, { maxAttempts: 1 });
    for (const round of [0, 1, 2]) {
      const key = `race/${round}.json`;
      const statuses = await Promise.all(
        Array.from({ length: 20 }, (_, i) => statusOf(put(key, `writer ${i}`, true, client))),
      );
      const winners = statuses.flatMap((s, i) => (s === 200 ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(statuses.filter((s) => s === 412)).toHaveLength(19);
      expect((await bucket.read(key)).toString()).toBe(`writer ${winners[0]}`);
    }
    client.destroy();
  });

  it('lists a key right after its PUT returns', async () => {
    const written: string[] = [];
    for (let v = 0; v < 10; v++) {
      const key = `listed/_delta_log/${String(v).padStart(20, '0')}.json`;
      await put(key, `{"version":${v}}`, true);
      written.push(key);
      expect(await bucket.keys('listed/')).toEqual(written);
    }
  });

  it('takes a streamed body and a multipart upload, as the SDK sends them', async () => {
    const bytes = Buffer.alloc(6 * 1024 * 1024, 7);
    await bucket.client.send(
      new PutObjectCommand({
        Bucket: bucket.name,
        Key: 'streamed.bin',
        Body: Readable.from([bytes.subarray(0, 1000), bytes.subarray(1000)]),
        ContentLength: bytes.length,
      }),
    );
    expect((await bucket.read('streamed.bin')).equals(bytes)).toBe(true);

    const { UploadId } = await bucket.client.send(
      new CreateMultipartUploadCommand({ Bucket: bucket.name, Key: 'multipart.bin' }),
    );
    const parts = [bytes.subarray(0, 5 * 1024 * 1024), bytes.subarray(5 * 1024 * 1024)];
    const etags = [];
    for (const [i, part] of parts.entries()) {
      const up = await bucket.client.send(
        new UploadPartCommand({
          Bucket: bucket.name,
          Key: 'multipart.bin',
          UploadId,
          PartNumber: i + 1,
          Body: part,
        }),
      );
      etags.push({ PartNumber: i + 1, ETag: up.ETag });
    }
    // Not listed until completed: a multipart file appears whole.
    expect(await bucket.keys('multipart')).toEqual([]);
    await bucket.client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket.name,
        Key: 'multipart.bin',
        UploadId,
        MultipartUpload: { Parts: etags },
      }),
    );
    expect((await bucket.read('multipart.bin')).equals(bytes)).toBe(true);
  });

  it('refuses a request signed with the wrong secret, and an unsigned one', async () => {
    const wrong = new S3Client({
      endpoint: bucket.server.endpoint,
      region: bucket.server.region,
      forcePathStyle: true,
      credentials: { accessKeyId: bucket.server.accessKeyId, secretAccessKey: 'not-the-secret' },
      maxAttempts: 1,
    });
    expect(
      await statusOf(wrong.send(new GetObjectCommand({ Bucket: bucket.name, Key: 'streamed.bin' }))),
    ).toBe(403);
    wrong.destroy();
    const unsigned = await fetch(`${bucket.server.endpoint}/${bucket.name}/streamed.bin`);
    expect(unsigned.status).toBe(403);
  });

  it('hands a child process the endpoint, credentials and region', () => {
    expect(bucket.env()).toEqual({
      AWS_ENDPOINT_URL: bucket.server.endpoint,
      AWS_ACCESS_KEY_ID: bucket.server.accessKeyId,
      AWS_SECRET_ACCESS_KEY: bucket.server.secretAccessKey,
      AWS_REGION: bucket.server.region,
    });
    expect(bucket.url('ds')).toBe(`s3://${bucket.name}/ds`);
  });
});

describe('the non-enforcing proxy in front of S3Proxy', () => {
  let bucket: TestBucket;
  let proxy: Awaited<ReturnType<typeof startNonEnforcingProxy>>;
  let viaProxy: S3Client;
  beforeAll(async () => {
    bucket = await freshBucket('non-enforcing');
    proxy = await startNonEnforcingProxy(bucket.server);
    viaProxy = s3Client(bucket.server, { endpoint: proxy.url, maxAttempts: 1 });
  });
  afterAll(async () => {
    viaProxy?.destroy();
    await proxy?.stop();
  });

  it('lets a second conditional PUT overwrite the key (the condition never reaches S3Proxy)', async () => {
    const key = 'table/_delta_log/00000000000000000000.json';
    const cond = (body: string) =>
      statusOf(
        viaProxy.send(new PutObjectCommand({ Bucket: bucket.name, Key: key, Body: body, IfNoneMatch: '*' })),
      );
    expect(await cond('first')).toBe(200);
    expect(await cond('second')).toBe(200);
    expect(proxy.stripped).toBe(2);
    expect((await bucket.read(key)).toString()).toBe('second');
    // Everything else passes through, signed again: reads and listings through the proxy.
    const got = await viaProxy.send(new GetObjectCommand({ Bucket: bucket.name, Key: key }));
    expect(await got.Body!.transformToString()).toBe('second');
    // The same PUT straight to S3Proxy is refused: it is the proxy that drops the condition.
    expect(
      await statusOf(
        bucket.client.send(
          new PutObjectCommand({ Bucket: bucket.name, Key: key, Body: 'x', IfNoneMatch: '*' }),
        ),
      ),
    ).toBe(412);
  });
});
