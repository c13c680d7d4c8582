import type { Redactor } from './redactor.js';

/** Something that owns the terminal for a while (a progress display) and prints log text above itself. */
export interface StderrInterceptor {
  log(text: string): void;
}

/**
 * The one way text reaches stderr: redacted, and routed through a progress display while one is
 * drawn so log lines never tear the bars.
 */
export class StderrChannel {
  #interceptor: StderrInterceptor | undefined;

  constructor(
    readonly stream: NodeJS.WritableStream,
    readonly redactor: Redactor,
    readonly isTTY: boolean,
  ) {}

  write(text: string): void {
    const safe = this.redactor.redact(text);
    if (this.#interceptor !== undefined) this.#interceptor.log(safe);
    else this.stream.write(safe);
  }

  /** Installs (or with `undefined` removes) the display that owns the terminal. */
  intercept(interceptor: StderrInterceptor | undefined): void {
    this.#interceptor = interceptor;
  }
}
