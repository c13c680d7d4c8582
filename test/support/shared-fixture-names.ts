import type { S3Server } from './s3.js';
import type { TestSchemaRegistry } from './schema-registry.js';

/** The run's shared fixtures (shared-fixtures-setup.ts starts them) and what a test gets of each. */
export const SHARED_FIXTURES = ['redis', 'python-reader', 'chromium', 'schema-registry', 's3'] as const;
export type SharedFixtureName = (typeof SHARED_FIXTURES)[number];

export interface SharedFixtures {
  /** The run's Redis: share it by key prefix, token or group; never stop it or flush it. */
  readonly redis: { readonly url: string; readonly port: number };
  /** read_dataset.py serving on 127.0.0.1:`port` (python.ts talks to it). */
  readonly 'python-reader': { readonly port: number };
  /** The run's headless Chromium: `puppeteer.connect({ browserWSEndpoint: wsEndpoint })`. */
  readonly chromium: { readonly wsEndpoint: string };
  /** The run's Apicurio Registry (schema-registry.ts): share it by subject (a topic prefix of your own). */
  readonly 'schema-registry': TestSchemaRegistry;
  /** The run's S3Proxy (s3.ts): share it by bucket (`freshBucket()`), never stop it. */
  readonly s3: S3Server;
}
