/**
 * The checks and defaults of `QuoteflowClient`'s options: each refuses a bad option by name
 * (`QF_INVALID_OPTION`) when the client is built, before any request.
 */
import type { QuoteflowClientOptions, RetryOptions, TimeoutOptions } from '../client-types.js';
import { systemClock, type Clock } from '../clock.js';
import { InvalidOptionError } from '../errors.js';
import { FAMILIES, PRODUCT_CLASSES } from '../markets.js';
import { PLANS } from '../plans.js';

/** Defaults of {@link QuoteflowClientOptions}, units in the names. */
export const CLIENT_DEFAULTS = {
  timeouts: { requestMs: 10_000, suspensionMs: 60_000 },
  retry: {
    maxAttempts: 4,
    suspensionMaxAttempts: 1,
    baseDelayMs: 250,
    maxDelayMs: 15_000,
    missingRetries: 2,
  },
  keepAliveTimeoutMs: 30_000,
  connections: 32,
} as const;

function checkPositiveInt(option: string, value: unknown, min = 1): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new InvalidOptionError(
      option,
      `QuoteflowClient: "${option}" must be an integer >= ${min}, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/** The base URL without trailing slashes; an http(s) URL with no query string or credentials. */
export function checkBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new InvalidOptionError(
      'baseUrl',
      `QuoteflowClient: "baseUrl" must be an http(s) URL, got ${JSON.stringify(String(baseUrl))}`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidOptionError(
      'baseUrl',
      `QuoteflowClient: "baseUrl" must be an http(s) URL, got protocol ${JSON.stringify(url.protocol)}`,
    );
  }
  if (url.search !== '' || url.username !== '' || url.password !== '') {
    throw new InvalidOptionError(
      'baseUrl',
      'QuoteflowClient: "baseUrl" must carry no query string or credentials (pass the token as "token")',
    );
  }
  return url.href.replace(/\/+$/, '');
}

export function checkTokenAndPlan(options: QuoteflowClientOptions): void {
  if (typeof options.token !== 'string' || options.token.trim() === '') {
    throw new InvalidOptionError('token', 'QuoteflowClient: "token" must be a non-empty string');
  }
  if (!(PLANS as readonly string[]).includes(options.plan)) {
    throw new InvalidOptionError(
      'plan',
      `QuoteflowClient: "plan" must be one of ${PLANS.join(', ')}, got ${JSON.stringify(options.plan)}`,
    );
  }
}

export function resolveTimeouts(timeouts: TimeoutOptions | undefined): Required<TimeoutOptions> {
  return {
    requestMs: checkPositiveInt(
      'timeouts.requestMs',
      timeouts?.requestMs ?? CLIENT_DEFAULTS.timeouts.requestMs,
    ),
    suspensionMs: checkPositiveInt(
      'timeouts.suspensionMs',
      timeouts?.suspensionMs ?? CLIENT_DEFAULTS.timeouts.suspensionMs,
    ),
  };
}

/** The retry policy with its defaults; a finite `budgetMs` alone makes `maxAttempts` unlimited. */
export function resolveRetry(retry: RetryOptions | undefined): Required<RetryOptions> {
  const random = retry?.random ?? Math.random;
  if (typeof random !== 'function')
    throw new InvalidOptionError('retry.random', 'QuoteflowClient: "retry.random" must be a function');
  const budgetMs = retry?.budgetMs ?? Number.POSITIVE_INFINITY;
  if (typeof budgetMs !== 'number' || Number.isNaN(budgetMs) || budgetMs < 0)
    throw new InvalidOptionError(
      'retry.budgetMs',
      `QuoteflowClient: "retry.budgetMs" must be a number >= 0, got ${JSON.stringify(budgetMs)}`,
    );
  const maxAttempts = retry?.maxAttempts;
  const defaults = CLIENT_DEFAULTS.retry;
  return {
    maxAttempts:
      maxAttempts === undefined && Number.isFinite(budgetMs)
        ? Number.POSITIVE_INFINITY
        : checkPositiveInt('retry.maxAttempts', maxAttempts ?? defaults.maxAttempts),
    budgetMs,
    suspensionMaxAttempts: checkPositiveInt(
      'retry.suspensionMaxAttempts',
      retry?.suspensionMaxAttempts ?? defaults.suspensionMaxAttempts,
    ),
    baseDelayMs: checkPositiveInt('retry.baseDelayMs', retry?.baseDelayMs ?? defaults.baseDelayMs, 0),
    maxDelayMs: checkPositiveInt('retry.maxDelayMs', retry?.maxDelayMs ?? defaults.maxDelayMs, 0),
    missingRetries: checkPositiveInt(
      'retry.missingRetries',
      retry?.missingRetries ?? defaults.missingRetries,
      0,
    ),
    random,
  };
}

/** Refuses a product class or family override that is not one of the known ones. */
export function checkCodeOverrides(options: QuoteflowClientOptions): void {
  for (const [code, cls] of Object.entries(options.productClasses ?? {})) {
    if (!(PRODUCT_CLASSES as readonly string[]).includes(cls)) {
      throw new InvalidOptionError(
        `productClasses.${code}`,
        `QuoteflowClient: "productClasses.${code}" must be one of ${PRODUCT_CLASSES.join(', ')}, got ${JSON.stringify(cls)}`,
      );
    }
  }
  for (const [code, family] of Object.entries(options.families ?? {})) {
    if (!(FAMILIES as readonly string[]).includes(family)) {
      throw new InvalidOptionError(
        `families.${code}`,
        `QuoteflowClient: "families.${code}" must be one of ${FAMILIES.join(', ')}, got ${JSON.stringify(family)}`,
      );
    }
  }
}

export function checkClock(clock: Clock | undefined): Clock {
  const c = clock ?? systemClock;
  if (
    typeof c !== 'object' ||
    c === null ||
    typeof c.now !== 'function' ||
    typeof c.setTimeout !== 'function' ||
    typeof c.clearTimeout !== 'function'
  )
    throw new InvalidOptionError(
      'clock',
      'QuoteflowClient: "clock" must have now(), setTimeout() and clearTimeout() (see systemClock)',
    );
  return c;
}
