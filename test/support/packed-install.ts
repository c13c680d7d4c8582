// The packages as a user installs them: packed as they would be published (`pnpm pack`: the
// `files` of each manifest, `workspace:` and `catalog:` replaced by versions), unpacked into a fresh
// project outside the repository, beside exactly the dependencies their manifests declare, each
// linked to the copy the workspace installed (offline, and nothing hoisted that no manifest
// names: a package that loads an undeclared one fails here as it would for a user).
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');

/** A package's manifest, as far as installing it goes. */
export interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly engines?: { readonly node?: string };
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly peerDependenciesMeta?: Readonly<Record<string, { readonly optional?: boolean }>>;
}

/** The workspace's packages, packed. */
export interface Packed {
  /** A temporary directory holding the tarballs and every project made from them: remove it after. */
  readonly dir: string;
  /** Tarball path by package name (`@quoteflow/core`). */
  readonly tarballs: ReadonlyMap<string, string>;
  /** The packed manifest by package name. */
  readonly manifests: ReadonlyMap<string, Manifest>;
  /** The paths inside a tarball (`package/dist/index.js`, …). */
  entries(name: string): readonly string[];
}

function run(command: string, args: readonly string[], cwd: string): string {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
  return r.stdout;
}

/** pnpm: the one the repository bootstrapped (scripts/toolchain.sh), else the one on PATH. */
function pnpm(): string {
  const tools = join(REPO_ROOT, '.tools/bin/pnpm');
  return existsSync(tools) ? tools : 'pnpm';
}

/** Packs every package under `packages/` (built first: `pnpm build`) into a temporary directory. */
export function packWorkspace(): Packed {
  const dir = mkdtempSync(join(tmpdir(), 'qf-packed-'));
  const packs = join(dir, 'packs');
  run(pnpm(), ['-r', '--filter', './packages/*', 'pack', '--pack-destination', packs], REPO_ROOT);
  const tarballs = new Map<string, string>();
  const manifests = new Map<string, Manifest>();
  for (const file of readdirSync(packs).filter((f) => f.endsWith('.tgz'))) {
    const path = join(packs, file);
    const manifest = JSON.parse(run('tar', ['-xzOf', path, 'package/package.json'], dir)) as Manifest;
    tarballs.set(manifest.name, path);
    manifests.set(manifest.name, manifest);
  }
  const entries = (name: string): readonly string[] =>
    run('tar', ['-tzf', tarballs.get(name)!], dir)
      .trim()
      .split('\n');
  return { dir, tarballs, manifests, entries };
}

/** Where the workspace installed `name` (a package's own node_modules, then the root's). */
export function workspaceCopy(name: string): string {
  const places = [
    ...readdirSync(join(REPO_ROOT, 'packages')).map((p) =>
      join(REPO_ROOT, 'packages', p, 'node_modules', name),
    ),
    join(REPO_ROOT, 'node_modules', name),
  ];
  const found = places.find((p) => existsSync(join(p, 'package.json')));
  if (found === undefined) throw new Error(`${name}: not installed in the workspace (pnpm install)`);
  return realpathSync(found);
}

/** Every package a set of third-party packages brings, themselves included (dependencies, transitively). */
export function dependencyClosure(names: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string, from: string | undefined): void => {
    if (seen.has(name)) return;
    // Resolved as Node would from the package that depends on it (pnpm's layout: a sibling).
    const at =
      from === undefined
        ? workspaceCopy(name)
        : [join(from, 'node_modules', name), join(dirname(from), name), join(dirname(dirname(from)), name)]
            .filter((p) => existsSync(join(p, 'package.json')))
            .map((p) => realpathSync(p))[0];
    if (at === undefined) return; // an optional dependency for another platform
    seen.add(name);
    const m = JSON.parse(readFileSync(join(at, 'package.json'), 'utf8')) as Manifest;
    for (const dep of Object.keys({ ...m.dependencies, ...m.optionalDependencies })) visit(dep, at);
  };
  for (const name of names) visit(name, undefined);
  return seen;
}

/**
 * A fresh project (under `packed.dir`) with the packed `packages` (and the @quoteflow packages they depend on), their
 * declared dependencies, and `extra` packages a user adds beside them (optional peers, rxjs, …).
 */
export function installPacked(
  packed: Packed,
  packages: readonly string[],
  extra: readonly string[] = [],
): string {
  const project = mkdtempSync(join(packed.dir, 'project-'));
  writeFileSync(join(project, 'package.json'), '{ "name": "consumer", "private": true, "type": "module" }\n');
  const modules = join(project, 'node_modules');
  const ours = new Set<string>();
  const add = (name: string): void => {
    if (ours.has(name)) return;
    const manifest = packed.manifests.get(name);
    if (manifest === undefined) throw new Error(`${name}: not packed`);
    ours.add(name);
    for (const dep of Object.keys(manifest.dependencies ?? {})) if (dep.startsWith('@quoteflow/')) add(dep);
  };
  packages.forEach(add);
  const linked = new Set<string>();
  const link = (name: string): void => {
    if (linked.has(name)) return;
    linked.add(name);
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(workspaceCopy(name), join(modules, name), 'dir');
  };
  for (const name of ours) {
    const at = join(modules, name);
    mkdirSync(at, { recursive: true });
    run('tar', ['-xzf', packed.tarballs.get(name)!, '-C', at, '--strip-components=1'], project);
    for (const dep of Object.keys(packed.manifests.get(name)!.dependencies ?? {}))
      if (!dep.startsWith('@quoteflow/')) link(dep);
  }
  extra.forEach(link);
  return project;
}
