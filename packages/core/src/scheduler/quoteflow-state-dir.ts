import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * The directory where quoteflow keeps state shared by every process of a user on this machine
 * (the per-token quota databases): `QUOTEFLOW_STATE_DIR`, else `$XDG_STATE_HOME/quoteflow`, else
 * `~/.local/state/quoteflow` (the XDG Base Directory default). Relative values are ignored, as the
 * XDG specification asks, except for `QUOTEFLOW_STATE_DIR`, which is taken as given.
 *
 * @param env - the environment to read. @defaultValue `process.env`
 * @example
 * ```ts
 * quoteflowStateDir({ XDG_STATE_HOME: '/var/lib/me' }); // '/var/lib/me/quoteflow'
 * ```
 */
export function quoteflowStateDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const explicit = env['QUOTEFLOW_STATE_DIR'];
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env['XDG_STATE_HOME'];
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'quoteflow');
  const home = env['HOME'];
  return join(home === undefined || home === '' ? homedir() : home, '.local', 'state', 'quoteflow');
}
