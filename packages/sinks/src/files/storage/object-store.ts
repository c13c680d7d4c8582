/** An object of an {@link ObjectStore}: its key (relative to the store's root), size and time. */
export interface StoredObject {
  readonly key: string;
  readonly size: number;
  /** Epoch ms of its last write. */
  readonly lastModifiedMs: number;
}

/**
 * Where a dataset's tables live: a local directory or an S3 bucket and prefix. Keys are relative
 * to the dataset root (`kline/_delta_log/00000000000000000000.json`), always with `/`. Every write
 * makes a whole object appear at once (a rename or one PUT / a completed multipart upload).
 */
export interface ObjectStore {
  /** `'local'` or `'s3'`. */
  readonly kind: 'local' | 's3';
  /** The root as the user named it (a directory, or `s3://bucket/prefix`), for messages. */
  readonly location: string;
  /** The object's bytes, or `undefined` when there is none. */
  read(key: string): Promise<Uint8Array | undefined>;
  /**
   * Objects whose key starts with `prefix`, sorted by key; with `startAfter`, only those after it.
   * Sizes and times come with every S3 listing; a local store reads them only with `details`.
   */
  list(prefix: string, startAfter?: string, details?: boolean): Promise<StoredObject[]>;
  /** Writes the whole object (replacing one that exists). */
  write(key: string, body: Uint8Array | string): Promise<void>;
  /** Writes the local file `localPath` as the object `key` (multipart for large files on S3). */
  upload(key: string, localPath: string): Promise<void>;
  /**
   * Creates the object only if there is none: true when this call created it, false when the key
   * was taken (locally `link()` → EEXIST, on S3 `If-None-Match: *` → 412).
   */
  createExclusive(key: string, body: Uint8Array | string): Promise<boolean>;
  /** Deletes the objects (missing ones are no error). */
  delete(keys: readonly string[]): Promise<void>;
}

/** An `s3://bucket/prefix` destination, parsed. */
export interface S3Location {
  readonly bucket: string;
  /** Without leading or trailing `/`; `''` for the bucket's root. */
  readonly prefix: string;
}

/** Whether `out` names an S3 destination (`s3://…`, any case of the scheme). */
export function isS3Url(out: string): boolean {
  return /^s3:\/\//i.test(out);
}

/**
 * Parses `s3://bucket/prefix`; `undefined` for anything else. A bucket name is 3 to 63 lowercase
 * letters, digits, dots and hyphens (S3's rules, which S3-compatible servers share).
 */
export function parseS3Url(out: string): S3Location | { readonly error: string } {
  const m = /^s3:\/\/([^/]*)\/?(.*)$/i.exec(out);
  if (m === null) return { error: 'not an s3:// URL' };
  const bucket = m[1]!;
  if (bucket === '') return { error: 'no bucket (give s3://bucket/prefix)' };
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    return {
      error: `"${bucket}" is not a valid bucket name (3-63 lowercase letters, digits, dots, hyphens)`,
    };
  const prefix = m[2]!.replace(/\/+$/, '');
  if (prefix.split('/').some((part) => part === '' || part === '.' || part === '..'))
    if (prefix !== '') return { error: `the prefix "${prefix}" has an empty, "." or ".." part` };
  return { bucket, prefix };
}
