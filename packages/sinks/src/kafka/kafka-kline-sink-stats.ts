/** Counters of a {@link KafkaKlineSink}, for monitoring, tests and benchmarks. */
export interface KafkaKlineSinkStats {
  /** Final bars taken by `write()`. */
  readonly taken: number;
  /** Final bars dropped by `write()`: covered by a watermark, or taken since the last checkpoint. */
  readonly dropped: number;
  /** Forming updates (`final: false`) taken. */
  readonly forming: number;
  /** Final bars of completed checkpoints (committed, or acknowledged at least once). */
  readonly committed: number;
  /** Checkpoints completed. */
  readonly checkpoints: number;
  /**
   * Records taken and not yet acknowledged by the broker (at most `maxBufferedRecords`, plus those
   * released from a hold).
   */
  readonly buffered: number;
  /**
   * Exactly once: failed attempts of a transactional operation (a batch, a commit) that the sink
   * redid with a new producer (a broker restarting, the coordinator moving); 0 at least once.
   */
  readonly retries: number;
  /** How long the last commit took (watermark records and `EndTxn`), ms; `undefined` before one. */
  readonly lastCommitMs: number | undefined;
  /** Updates held back for order: their series' history is still open (`mark`), so not taken yet. */
  readonly held: number;
}
