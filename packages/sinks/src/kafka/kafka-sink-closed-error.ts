import { QuoteflowError } from '@quoteflow/core';

/** A record was written to a Kafka sink after `close()` was called; make a new sink. */
export class KafkaSinkClosedError extends QuoteflowError {
  constructor() {
    super('QF_CLOSED', 'kafka: write after close(); the sink is closed');
  }
}
