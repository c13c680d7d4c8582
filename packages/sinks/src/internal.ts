// `@quoteflow/sinks/internal`: what quoteflow's own packages (and their tests) need from this package
// and users do not. Not covered by semver: a name here may change or go in any release.
export { QUOTEFLOW_FORMAT_VERSION, checkFormatVersion } from './format-version.js';
export { DATASET_LOG_DIR, listDataFiles } from './files/dataset-log.js';
export {
  forEachDatasetRow,
  forEachKlineRow,
  epochMsOf,
  readKlineStarts,
  summarizeKlineFile,
} from './files/read-dataset-rows.js';
export { isS3Url, parseS3Url } from './files/storage/object-store.js';
export { openStore } from './files/storage/open-store.js';
export { openLocalCopy } from './files/storage/local-copy.js';
export { checkTableFormats } from './files/check-table-formats.js';
export { checkTableOwners } from './files/check-table-owners.js';
export type { CheckTableOwnersOptions } from './files/check-table-owners.js';
export { klineWatermarkMessage } from './kafka/kline-watermark-record.js';
export { checkKlineWatermarksFormat } from './kafka/check-kline-watermarks-format.js';
export {
  toKafkaMessage,
  klineMessageValue,
  depthMessageValue,
  suspensionMessageValue,
} from './kafka/to-kafka-message.js';
export { KafkajsDriver } from './kafka/kafkajs-driver.js';
export { PlatformaticKafkaDriver } from './kafka/platformatic-driver.js';
export { checkRegistryUrl } from './kafka/schema-registry/schema-registry-serializer.js';
export { kafkaSettingsFromProperties, isSecretKafkaProperty } from './kafka/kafka-properties.js';
export { checkKafkaCluster, KafkaClusterError } from './kafka/check-kafka-cluster.js';
