/**
 * A test file's side of the run's shared fixtures (shared-fixtures-setup.ts): `sharedFixture(name)`
 * starts the program on the first ask of the run and answers at once afterwards.
 *
 * @example
 * ```ts
 * const { url } = await sharedFixture('redis');
 * ```
 */
import type { SharedFixtureName, SharedFixtures } from './shared-fixture-names.js';

const asked = new Map<SharedFixtureName, Promise<unknown>>();

export function sharedFixture<N extends SharedFixtureName>(name: N): Promise<SharedFixtures[N]> {
  let got = asked.get(name);
  if (got === undefined) {
    got = ask(name);
    asked.set(name, got);
    got.catch(() => asked.delete(name));
  }
  return got as Promise<SharedFixtures[N]>;
}

/** Whether this process is a vitest worker (a bench or a script using test/support is not). */
export function inVitest(): boolean {
  return process.env['VITEST'] !== undefined;
}

async function ask(name: SharedFixtureName): Promise<unknown> {
  // Imported here, so that a bench or a script importing test/support outside vitest still loads.
  const { inject } = await import('vitest');
  const base = inject('sharedFixturesUrl');
  if (!base)
    throw new Error(
      'no sharedFixturesUrl provided: is test/support/shared-fixtures-setup.ts a globalSetup of this project?',
    );
  const res = await fetch(`${base}/fixture/${encodeURIComponent(name)}`, { method: 'POST' });
  const body = await res.text();
  if (!res.ok) throw new Error(`shared fixture ${name} could not start: ${body}`);
  return JSON.parse(body) as unknown;
}
