// Append-only typed arrays that double their capacity: no per-element boxing and no
// million-element JS arrays for the garbage collector to trace, so buffering rows stays cheap.
// One class per element type on purpose: a single generic class makes `push` megamorphic
// (measured 4x slower on 1M rows).

/** Growable Float64Array. */
export class F64Builder {
  private buf = new Float64Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  /** The values (an exactly sized copy); the builder is empty afterwards. */
  take(): Float64Array {
    const out = this.buf.slice(0, this.length);
    this.length = 0;
    return out;
  }
}

/** Growable Int32Array. */
export class I32Builder {
  private buf = new Int32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Int32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  take(): Int32Array {
    const out = this.buf.slice(0, this.length);
    this.length = 0;
    return out;
  }
}

/** Growable BigUint64Array (the caller checks the range: the array would wrap silently). */
export class U64Builder {
  private buf = new BigUint64Array(64);
  length = 0;
  push(v: bigint): void {
    if (this.length === this.buf.length) {
      const next = new BigUint64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  take(): BigUint64Array {
    const out = this.buf.slice(0, this.length);
    this.length = 0;
    return out;
  }
}

/** Growable validity bytes (1 = present) that remembers whether any value was null. */
export class ValidityBuilder {
  private buf = new Uint8Array(1024);
  length = 0;
  nulls = 0;
  push(present: boolean): void {
    if (this.length === this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    if (present) this.buf[this.length++] = 1;
    else {
      this.buf[this.length++] = 0;
      this.nulls++;
    }
  }
  /** The bytes, or `undefined` when no value was null; the builder is empty afterwards. */
  take(): Uint8Array | undefined {
    const out = this.nulls === 0 ? undefined : this.buf.slice(0, this.length);
    this.length = 0;
    this.nulls = 0;
    return out;
  }
  /** The bytes even when none is null. */
  takeAll(): Uint8Array {
    const out = this.buf.slice(0, this.length);
    this.length = 0;
    this.nulls = 0;
    return out;
  }
}
