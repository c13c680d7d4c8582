const MASK = '***';

/**
 * Secrets at least this long are masked wherever they stand; shorter ones are common words (the
 * README's `demo` token) and are masked only where a token is written (`token=…`, `"token":"…"`,
 * `--token …`, `Bearer …`), so `quoteflow demo` stays readable while a URL never shows the token.
 */
export const MASK_EVERYWHERE_MIN_LENGTH = 12;

/** `token=`, `token":"`, `token: `, `--token `, `Bearer `: what stands before a token. */
const TOKEN_CONTEXT = String.raw`(?:token(?:=|%3D|"\s*:\s*"|:\s*|\s+)|Bearer\s+)`;

/**
 * Replaces every secret it knows (tokens, in raw and URL-encoded form) in text that leaves the
 * process: log lines, error messages, stdout. Defence in depth: nothing should carry a token in the
 * first place (the client redacts its errors), but a token in an upstream error or a URL must still
 * never reach a terminal or file. See {@link MASK_EVERYWHERE_MIN_LENGTH} for short tokens.
 */
export class Redactor {
  readonly #everywhere = new Set<string>();
  readonly #inContext = new Set<string>();

  /** Registers a secret; empty strings are ignored. */
  add(secret: string | undefined): void {
    if (secret === undefined || secret.length === 0) return;
    const into = secret.length >= MASK_EVERYWHERE_MIN_LENGTH ? this.#everywhere : this.#inContext;
    into.add(secret);
    for (const variant of [encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]) {
      if (variant !== secret) into.add(variant);
    }
  }

  /** `text` with every known secret replaced by `***`. */
  redact(text: string): string {
    let out = text;
    // Longest first, so a secret that contains another is masked whole.
    for (const secret of [...this.#everywhere].sort((a, b) => b.length - a.length)) {
      if (out.includes(secret)) out = out.split(secret).join(MASK);
    }
    for (const secret of this.#inContext) {
      if (!out.includes(secret)) continue;
      const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      out = out.replace(new RegExp(`(${TOKEN_CONTEXT})${escaped}(?![\\w-])`, 'gi'), `$1${MASK}`);
    }
    return out;
  }
}
