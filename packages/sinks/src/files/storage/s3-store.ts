import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type * as ClientS3 from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { retryWithBudget } from '@quoteflow/core/internal';
import { FileSinkError } from '../file-sink-error.js';
import type { ObjectStore, S3Location, StoredObject } from './object-store.js';
import { requirePackagesOf } from '../../internal/optional-packages.js';

type ClientModule = typeof ClientS3;

/** How long a conditional PUT answered 409 (another write of the key in flight) is asked again, ms. */
const IN_FLIGHT_WRITE_WAIT_MS = 10_000;

/** What failed, as a status code (the SDK's `$metadata`), for deciding on 404 and 412. */
function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** The endpoint the SDK will use: `AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL` (unset: AWS). */
export function s3Endpoint(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const e = env['AWS_ENDPOINT_URL_S3'] ?? env['AWS_ENDPOINT_URL'];
  return e === undefined || e === '' ? undefined : e;
}

/**
 * Path-style addressing (`endpoint/bucket/key`) for an endpoint on an IP address or `localhost`
 * (virtual hosts cannot resolve there), or when `AWS_S3_FORCE_PATH_STYLE=true`.
 */
export function usesPathStyle(endpoint: string | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env['AWS_S3_FORCE_PATH_STYLE'] ?? '').toLowerCase() === 'true') return true;
  if (endpoint === undefined) return false;
  let host: string;
  try {
    host = new URL(endpoint).hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.startsWith('[');
}

/**
 * A bucket and prefix as an {@link ObjectStore}, through the AWS SDK for JavaScript v3 (loaded
 * here, on first use of an `s3://` destination only). Configured as the AWS SDKs are: environment
 * (`AWS_ACCESS_KEY_ID`, `AWS_REGION`, `AWS_ENDPOINT_URL`, …), shared config and credentials files,
 * `AWS_PROFILE`. `createExclusive` is a `PutObject` with `If-None-Match: *`; {@link openS3Store}
 * checks the server enforces it before anything is written.
 */
export class S3Store implements ObjectStore {
  readonly kind = 's3' as const;
  readonly location: string;

  private constructor(
    readonly bucket: string,
    readonly prefix: string,
    readonly endpoint: string | undefined,
    private readonly client: S3Client,
    private readonly sdk: ClientModule,
  ) {
    this.location = `s3://${bucket}${prefix === '' ? '' : `/${prefix}`}`;
  }

  /** Opens the store (no request yet). */
  static async create(at: S3Location, env: NodeJS.ProcessEnv = process.env): Promise<S3Store> {
    requirePackagesOf('s3');
    const sdk = await import('@aws-sdk/client-s3');
    const endpoint = s3Endpoint(env);
    // An empty variable is unset, as the SDK's own environment provider reads it.
    const keyId = env['AWS_ACCESS_KEY_ID'] || undefined;
    const secret = env['AWS_SECRET_ACCESS_KEY'] || undefined;
    const region = env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'];
    const config = {
      forcePathStyle: usesPathStyle(endpoint, env),
      // S3-compatible servers do not all know the SDK's default CRC checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // What `env` says (the process's environment by default) first; the SDK's own chain
      // (profile, config and credentials files, instance roles) for what it does not say.
      ...(endpoint === undefined ? {} : { endpoint }),
      ...(region === undefined || region === '' ? {} : { region }),
      ...(keyId === undefined || secret === undefined
        ? {}
        : {
            credentials: {
              accessKeyId: keyId,
              secretAccessKey: secret,
              ...(env['AWS_SESSION_TOKEN'] === undefined ? {} : { sessionToken: env['AWS_SESSION_TOKEN'] }),
            },
          }),
    } as const;
    let client = new sdk.S3Client(config);
    // No region configured (common with S3-compatible servers): the SDK would refuse every call.
    const configured = await client.config.region().catch(() => undefined);
    if (configured === undefined || configured === '') {
      client.destroy();
      client = new sdk.S3Client({ ...config, region: 'us-east-1' });
    }
    return new S3Store(at.bucket, at.prefix, endpoint, client, sdk);
  }

  /** Where requests go, for messages: the endpoint (or AWS) and the bucket. */
  get describe(): string {
    return `bucket "${this.bucket}" at ${this.endpoint ?? 'AWS S3'}`;
  }

  #key(key: string): string {
    return this.prefix === '' ? key : `${this.prefix}/${key}`;
  }

  #fail(what: string, err: unknown): FileSinkError {
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return new FileSinkError(
      'QF_OBJECT_STORE',
      `${this.location}: ${what} failed (${this.describe}): ${reason.slice(0, 300)}`,
      {
        retryable: true,
        cause: err,
      },
    );
  }

  async read(key: string): Promise<Uint8Array | undefined> {
    try {
      const res = await this.client.send(
        new this.sdk.GetObjectCommand({ Bucket: this.bucket, Key: this.#key(key) }),
      );
      return await res.Body!.transformToByteArray();
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw this.#fail(`reading ${key}`, err);
    }
  }

  async list(prefix: string, startAfter?: string): Promise<StoredObject[]> {
    const out: StoredObject[] = [];
    const strip = this.prefix === '' ? 0 : this.prefix.length + 1;
    let token: string | undefined;
    try {
      do {
        const res = await this.client.send(
          new this.sdk.ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.#key(prefix),
            ...(startAfter === undefined || token !== undefined ? {} : { StartAfter: this.#key(startAfter) }),
            ...(token === undefined ? {} : { ContinuationToken: token }),
          }),
        );
        for (const o of res.Contents ?? [])
          if (o.Key !== undefined)
            out.push({
              key: o.Key.slice(strip),
              size: o.Size ?? 0,
              lastModifiedMs: o.LastModified?.getTime() ?? 0,
            });
        token = res.IsTruncated === true ? res.NextContinuationToken : undefined;
      } while (token !== undefined);
    } catch (err) {
      throw this.#fail(`listing ${prefix}`, err);
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** One PutObject of the whole body; `ifNoneMatch` makes it conditional on the key being free. */
  async #put(key: string, body: Uint8Array | string, ifNoneMatch: boolean): Promise<void> {
    const params = {
      Bucket: this.bucket,
      Key: this.#key(key),
      Body: body,
      ContentType: 'application/octet-stream',
    };
    await this.client.send(
      new this.sdk.PutObjectCommand(ifNoneMatch ? { ...params, IfNoneMatch: '*' } : params),
    );
  }

  async write(key: string, body: Uint8Array | string): Promise<void> {
    try {
      await this.#put(key, body, false);
    } catch (err) {
      throw this.#fail(`writing ${key}`, err);
    }
  }

  async upload(key: string, localPath: string): Promise<void> {
    try {
      // One PUT up to a part's size (8 MiB), a multipart upload completed at once above it: the
      // object appears whole either way.
      const { Upload } = await import('@aws-sdk/lib-storage');
      await new Upload({
        client: this.client,
        partSize: 8 * 1024 * 1024,
        params: {
          Bucket: this.bucket,
          Key: this.#key(key),
          Body: createReadStream(localPath),
          ContentType: 'application/octet-stream',
        },
      }).done();
    } catch (err) {
      throw this.#fail(`uploading ${key}`, err);
    }
  }

  async createExclusive(key: string, body: Uint8Array | string): Promise<boolean> {
    const attempt = async (): Promise<boolean> => {
      try {
        await this.#put(key, body, true);
        return true;
      } catch (err) {
        if (statusOf(err) === 412) return false;
        throw err;
      }
    };
    try {
      // 409: another conditional write of the key is in flight (AWS); its outcome decides, so the
      // PUT is asked again after it (jittered: writers racing for one version spread out).
      return await retryWithBudget(attempt, {
        budgetMs: IN_FLIGHT_WRITE_WAIT_MS,
        baseDelayMs: 50,
        maxDelayMs: 1_000,
        retryable: (err) => statusOf(err) === 409,
      });
    } catch (err) {
      throw this.#fail(`creating ${key} (If-None-Match)`, err);
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      try {
        for (const key of batch)
          await this.client.send(
            new this.sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: this.#key(key) }),
          );
      } catch (err) {
        throw this.#fail(`deleting ${batch.length} object(s)`, err);
      }
    }
  }

  /**
   * Checks the server enforces conditional writes: a probe object created twice with
   * `If-None-Match: *` must be refused the second time (412). A server that ignores the header
   * (s3rver, a proxy stripping it) would let two writers commit the same version.
   */
  async probeConditionalWrites(): Promise<void> {
    const key = `_quoteflow_probe/${randomBytes(8).toString('hex')}`;
    const first = await this.createExclusive(key, 'probe');
    let second: boolean;
    try {
      second = await this.createExclusive(key, 'probe');
    } finally {
      await this.delete([key]).catch(() => undefined);
    }
    if (first && !second) return;
    throw new FileSinkError(
      'QF_OBJECT_STORE',
      `${this.location}: the server (${this.describe}) does not enforce conditional writes (If-None-Match: *): ` +
        `a second PutObject of ${this.#key(key)} with If-None-Match: * was accepted, so two writers could commit the same ` +
        'table version; quoteflow refuses to commit there. Use an S3 server that answers 412 to it (AWS S3, S3Proxy)',
    );
  }

  /**
   * Resolves the credentials the SDK signs with (environment, profile, SSO, container or instance
   * role) before any request: their absence is then named with where they are looked for and where
   * requests would go, instead of the SDK's `Could not load credentials from any providers`.
   * @throws FileSinkError `QF_INVALID_OPTION` (configuration: exit 2 in the CLI)
   */
  async checkCredentials(env: NodeJS.ProcessEnv = process.env): Promise<void> {
    try {
      await this.client.config.credentials();
    } catch (err) {
      throw new FileSinkError(
        'QF_INVALID_OPTION',
        missingCredentialsMessage(this.location, this.endpoint, env, err),
        {
          cause: err,
        },
      );
    }
  }

  /** Releases the client's sockets. */
  close(): void {
    this.client.destroy();
  }
}

/** Opens `s3://bucket/prefix` and checks that the server enforces conditional writes. */
export async function openS3Store(at: S3Location, env: NodeJS.ProcessEnv = process.env): Promise<S3Store> {
  const store = await S3Store.create(at, env);
  try {
    await store.checkCredentials(env);
    await store.probeConditionalWrites();
  } catch (err) {
    store.close();
    throw err;
  }
  return store;
}

/**
 * What an `s3://` destination without credentials is told: each setting the SDK looks at and
 * whether it is set (never a value but the profile's name and the endpoint), and where requests
 * would go.
 */
function missingCredentialsMessage(
  location: string,
  endpoint: string | undefined,
  env: NodeJS.ProcessEnv,
  err: unknown,
): string {
  const set = (name: string): string => `${name} ${(env[name] ?? '') === '' ? 'unset' : 'set'}`;
  const profile = env['AWS_PROFILE'] ?? '';
  const reason = err instanceof Error ? err.message.slice(0, 200) : String(err);
  return (
    `${location}: no AWS credentials found (${reason}). Looked at ${set('AWS_ACCESS_KEY_ID')} and ` +
    `${set('AWS_SECRET_ACCESS_KEY')}; AWS_PROFILE ${profile === '' ? 'unset (profile "default")' : `"${profile}"`} in ` +
    `the shared credentials and config files (~/.aws/credentials, ~/.aws/config); SSO, container and ` +
    `instance roles. Requests would go to ${endpoint ?? 'AWS S3 (AWS_ENDPOINT_URL unset)'}. Set ` +
    'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, and AWS_ENDPOINT_URL for an ' +
    'S3-compatible server'
  );
}
