import { describe, expect, it } from 'vitest';
import { MissingPackageError } from '../missing-package-error.js';
import { OPTIONAL_PARTS, requirePackagesOf, type OptionalPart } from './optional-packages.js';
import manifest from '../../package.json' with { type: 'json' };

/** A resolver that finds every package but `absent` (Node's error code for a missing one). */
const without =
  (...absent: string[]) =>
  (name: string): string => {
    if (!absent.includes(name)) return `/somewhere/${name}`;
    throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });
  };

describe('optional packages', () => {
  it('every package a part loads is an optional peer dependency of the package', () => {
    const peers = manifest.peerDependencies as Record<string, string>;
    const meta = manifest.peerDependenciesMeta as Record<string, { optional?: boolean }>;
    const loaded = Object.values(OPTIONAL_PARTS).flatMap((p) => [...p.packages]);
    expect(Object.keys(peers).sort()).toEqual([...new Set(loaded)].sort());
    for (const name of loaded) expect(meta[name]?.optional, name).toBe(true);
  });

  it('a part whose packages are all there passes', () => {
    for (const part of Object.keys(OPTIONAL_PARTS) as OptionalPart[])
      expect(() => requirePackagesOf(part, without())).not.toThrow();
  });

  it('names the part, each missing package and the command that installs them at the supported versions', () => {
    const err = (() => {
      try {
        requirePackagesOf('datasets', without('apache-arrow', 'parquet-wasm'));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(MissingPackageError);
    const e = err as MissingPackageError;
    expect([e.name, e.code, e.retryable]).toEqual(['MissingPackageError', 'QF_MISSING_PACKAGE', false]);
    expect(e.packages).toEqual([
      { name: 'apache-arrow', range: manifest.peerDependencies['apache-arrow'] },
      { name: 'parquet-wasm', range: manifest.peerDependencies['parquet-wasm'] },
    ]);
    expect(e.message).toBe(
      `@quoteflow/sinks: datasets (Parquet, Arrow IPC, NDJSON and their Delta log) need apache-arrow and parquet-wasm, not installed: add them to your project (npm install apache-arrow@${manifest.peerDependencies['apache-arrow']} parquet-wasm@${manifest.peerDependencies['parquet-wasm']})`,
    );
  });

  it('names only what is missing, in the singular for one', () => {
    expect(() => requirePackagesOf('schema-registry', without('avsc'))).toThrow(
      `@quoteflow/sinks: Avro values through a schema registry needs avsc, not installed: add it to your project (npm install avsc@${manifest.peerDependencies.avsc})`,
    );
  });

  it('a package that is there but not loadable this way counts as installed: its own import says why', () => {
    const notExported = (): string => {
      throw Object.assign(new Error('No "exports" main defined'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' });
    };
    expect(() => requirePackagesOf('kafkajs', notExported)).not.toThrow();
  });
});
