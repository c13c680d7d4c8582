/**
 * The optional peer dependencies of `@quoteflow/sinks`, by the part that needs them. A project
 * installs the libraries of the parts it uses (a files-only pipeline never downloads a Kafka client
 * or the AWS SDK); each part asks {@link requirePackagesOf} before it loads them, so a missing one
 * is a {@link MissingPackageError} naming it, not a module-resolution error from deep inside.
 */
import { createRequire } from 'node:module';
import { MissingPackageError } from '../missing-package-error.js';

/**
 * Each part, the packages it loads, and how it loads them (an ES `import`, or `require` for the
 * Kafka clients, loaded synchronously), which is how they are looked for: the two differ (only
 * `require` reads `NODE_PATH`, which `pnpm exec` sets).
 */
export const OPTIONAL_PARTS = {
  datasets: {
    what: 'datasets (Parquet, Arrow IPC, NDJSON and their Delta log)',
    packages: ['apache-arrow', 'parquet-wasm'],
    loadedBy: 'import',
  },
  s3: {
    what: 'datasets on S3 (s3:// locations)',
    packages: ['@aws-sdk/client-s3', '@aws-sdk/lib-storage'],
    loadedBy: 'import',
  },
  kafkajs: { what: 'the kafkajs Kafka driver (the default)', packages: ['kafkajs'], loadedBy: 'require' },
  'kafkajs-codecs': {
    what: 'lz4 and snappy compression with the kafkajs driver',
    packages: ['@platformatic/wasm-utils'],
    loadedBy: 'require',
  },
  'platformatic-kafka': {
    what: 'the platformatic Kafka driver, and reading a topic back (KafkaKlineSink with either driver)',
    packages: ['@platformatic/kafka'],
    loadedBy: 'require',
  },
  'schema-registry': {
    what: 'Avro values through a schema registry',
    packages: ['@kafkajs/confluent-schema-registry', 'avsc'],
    loadedBy: 'import',
  },
} as const satisfies Record<
  string,
  { what: string; packages: readonly string[]; loadedBy: 'import' | 'require' }
>;
export type OptionalPart = keyof typeof OPTIONAL_PARTS;

const load = createRequire(import.meta.url);
const found = new Set<OptionalPart>();

function installed(name: string, resolve: (name: string) => string): boolean {
  try {
    resolve(name);
    return true;
  } catch (err) {
    // Present but not loadable this way (an export map without a matching condition) counts as
    // installed: the part's own import says more than this check could.
    const code = (err as NodeJS.ErrnoException).code;
    return code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND';
  }
}

/** The version ranges this release was built and tested with: the package's `peerDependencies`. */
function rangeOf(name: string): string {
  const manifest = load('../../package.json') as { peerDependencies?: Record<string, string> };
  return manifest.peerDependencies?.[name] ?? 'latest';
}

/**
 * Throws a {@link MissingPackageError} when a package `part` needs is not installed; remembers
 * a part found complete, so a hot path pays the lookup once. `resolve` stands in for Node's
 * module resolution in tests.
 */
export function requirePackagesOf(part: OptionalPart, resolve?: (name: string) => string): void {
  if (resolve === undefined && found.has(part)) return;
  const { what, packages, loadedBy } = OPTIONAL_PARTS[part];
  const lookup =
    resolve ?? (loadedBy === 'require' ? load.resolve : (name: string) => import.meta.resolve(name));
  const missing = packages.filter((name) => !installed(name, lookup));
  if (missing.length > 0) {
    throw new MissingPackageError(
      what,
      missing.map((name) => ({ name, range: rangeOf(name) })),
    );
  }
  if (resolve === undefined) found.add(part);
}
