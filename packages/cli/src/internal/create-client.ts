import { QuoteflowClient, type QuoteflowLogger } from '@quoteflow/core';
import type { Logger } from 'pino';
import type { ServiceOptions } from './service-options.js';

/** The pino logger as the library's structured logger (debug and warn events, token never included). */
export function libraryLogger(logger: Logger): QuoteflowLogger {
  return {
    debug: (event, fields) => logger.debug(fields, event),
    warn: (event, fields) => logger.warn(fields, event),
  };
}

/** A client for the command's service options, logging through the CLI's logger. */
export function createClient(service: ServiceOptions, logger: Logger): QuoteflowClient {
  return new QuoteflowClient({
    baseUrl: service.baseUrl,
    token: service.token,
    plan: service.plan,
    logger: libraryLogger(logger),
  });
}
