const MASK = '***';

/**
 * Replaces every secret it knows (tokens, in raw and URL-encoded form) in text that leaves the
 * process: log lines, error messages, stdout. Defence in depth: nothing should carry a token in the
 * first place, but a token in an upstream error or a URL must still never reach a terminal or file.
 */
export class Redactor {
  readonly #secrets = new Set<string>();

  /** Registers a secret; empty strings are ignored. */
  add(secret: string | undefined): void {
    if (secret === undefined || secret.length === 0) return;
    this.#secrets.add(secret);
    for (const variant of [encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]) {
      if (variant !== secret) this.#secrets.add(variant);
    }
  }

  /** `text` with every known secret replaced by `***`. */
  redact(text: string): string {
    let out = text;
    // Longest first, so a secret that contains another is masked whole.
    for (const secret of [...this.#secrets].sort((a, b) => b.length - a.length)) {
      if (out.includes(secret)) out = out.split(secret).join(MASK);
    }
    return out;
  }
}
