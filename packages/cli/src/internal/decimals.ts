/** Digits after the decimal point in `value`'s shortest decimal form (`1.25` → 2, `1e-7` → 7). */
export function decimalsOf(value: number): number {
  if (!Number.isFinite(value)) return 0;
  const [mantissa = '', exponent] = String(value).split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent ?? 0));
}

/**
 * `value` rounded to the most decimals any of `inputs` has: a difference of prices quoted to two
 * decimals is quoted to two decimals, not `6.199999999999989` (binary floating-point noise).
 */
export function roundLikeInputs(value: number, ...inputs: readonly number[]): number {
  return roundToDecimals(value, Math.max(0, ...inputs.map(decimalsOf)));
}

/** `value` rounded to `digits` decimals (15 at most: what a double carries). */
export function roundToDecimals(value: number, digits: number): number {
  return Number(value.toFixed(Math.min(15, digits)));
}

/**
 * The most decimals seen so far per key, for a value summed from them: a sum of volumes quoted
 * to five decimals is quoted to five, not `218.69825999999998`.
 */
export class DecimalsSeen {
  readonly #most = new Map<string, number>();

  /** Counts `value`'s decimals under `key` (`null`: nothing to count). */
  see(key: string, value: number | null): void {
    if (value === null) return;
    const digits = decimalsOf(value);
    if (digits > (this.#most.get(key) ?? 0)) this.#most.set(key, digits);
  }

  /** `value` rounded to the most decimals seen under `key` (`null` stays `null`). */
  round(key: string, value: number | null): number | null {
    return value === null ? null : roundToDecimals(value, this.#most.get(key) ?? 0);
  }
}
