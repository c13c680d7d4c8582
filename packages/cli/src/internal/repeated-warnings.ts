/**
 * Warnings that a poller would repeat on every cycle while nothing changes (the service leaving
 * the same codes out of every `/depth-tick` answer): the first of each kind and subject is a
 * warning, the repeats go to debug.
 */
const REPEATING: Record<string, (fields: Record<string, unknown>) => string> = {
  'response.missing-items': (f) => `${String(f['endpoint'])}:${JSON.stringify(f['missing'])}`,
};

/** Remembers which repeating warnings were already shown in this run. */
export class RepeatedWarnings {
  readonly #seen = new Set<string>();

  /** Whether this warning is a repeat of one already shown (then log it at debug). */
  isRepeat(msg: unknown, fields: unknown): boolean {
    if (typeof msg !== 'string' || typeof fields !== 'object' || fields === null) return false;
    const subjectOf = REPEATING[msg];
    if (subjectOf === undefined) return false;
    const key = `${msg}|${subjectOf(fields as Record<string, unknown>)}`;
    if (this.#seen.has(key)) return true;
    this.#seen.add(key);
    return false;
  }
}
