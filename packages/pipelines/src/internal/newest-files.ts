/** How many of the files a run wrote its summary lists (the newest); it counts them all. */
export const SUMMARY_FILES_AT_MOST = 1_000;

/**
 * The files a run wrote, as its summary gives them: the newest {@link SUMMARY_FILES_AT_MOST} and
 * how many in all. A run of months (a `sync`, `depth` or `suspensions --watch` left running) would
 * otherwise hold every file it ever wrote, for a summary read once, when it stops.
 */
export class NewestFiles<T> {
  #files: T[] = [];
  #count = 0;

  add(files: readonly T[]): void {
    this.#count += files.length;
    this.#files.push(...files);
    // Trimmed in bulk, so that each file is moved once at most.
    if (this.#files.length > 2 * SUMMARY_FILES_AT_MOST)
      this.#files = this.#files.slice(-SUMMARY_FILES_AT_MOST);
  }

  /** Every file added. */
  get count(): number {
    return this.#count;
  }

  /** The newest files added, oldest first. */
  get newest(): readonly T[] {
    return this.#files.slice(-SUMMARY_FILES_AT_MOST);
  }
}
