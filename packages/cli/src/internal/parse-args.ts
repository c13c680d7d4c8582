import { InvalidArgumentError } from 'commander';
import type { KlineType } from '@quoteflow/core';
import { KLINE_TYPE_CHOICES } from './choices.js';

const isKlineType = (n: number): n is KlineType => (KLINE_TYPE_CHOICES as readonly number[]).includes(n);

/** Commander argument parser for an integer >= `min`. */
export function intAtLeast(min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min) {
      throw new InvalidArgumentError(`expected an integer >= ${min}, got ${JSON.stringify(value)}`);
    }
    return n;
  };
}

/** Commander argument parser for a comma-separated list of kline types (1–10), duplicates dropped. */
export function klineTypeList(value: string): KlineType[] {
  const out: KlineType[] = [];
  for (const part of value.split(',')) {
    const n = Number(part.trim());
    if (part.trim() === '' || !isKlineType(n)) {
      throw new InvalidArgumentError(
        `expected kline types from 1 to 10 separated by commas, got ${JSON.stringify(value)}`,
      );
    }
    if (!out.includes(n)) out.push(n);
  }
  return out;
}

/** Commander argument parser for a comma-separated list of product codes (trimmed, duplicates dropped). */
export function codeList(value: string): string[] {
  const codes = [...new Set(value.split(',').map((c) => c.trim()))];
  if (codes.some((c) => c === '' || /\s/.test(c))) {
    throw new InvalidArgumentError(
      `expected product codes separated by commas, got ${JSON.stringify(value)}`,
    );
  }
  return codes;
}
