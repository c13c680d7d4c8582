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
  const digits = Math.min(15, Math.max(0, ...inputs.map(decimalsOf)));
  return Number(value.toFixed(digits));
}
