// Format versions: a table or record written by a newer release is refused with this error.
export { FormatVersionError } from './format-version.js';
// Sinks that commit in checkpoints and know how far each series reached (exactly once in any composition).
export type { CommittingSink, SinkCheckpoint } from './committing-sink.js';
export { commitTo, CommitControl } from './commit-to.js';
export { SeriesIntake } from './series-intake.js';
export type { CommitToOptions } from './commit-to.js';
export { DatasetSink, DATASET_SINK_DEFAULTS } from './files/dataset-sink.js';
export type { DatasetSinkOptions } from './files/dataset-sink.js';
// Tables kept healthy while they are written: tiered compaction, Delta checkpoints, log retention, vacuum.
export { TableUpkeep } from './files/table-upkeep.js';
export { TABLE_UPKEEP_DEFAULTS } from './files/table-upkeep-options.js';
export type {
  TableUpkeepOptions,
  TableUpkeepOpenOptions,
  UpkeepEvent,
  UpkeepStatus,
} from './files/table-upkeep-options.js';
// Files: Hive-partitioned Parquet / Arrow IPC / NDJSON datasets (contract.md "Datasets on disk").
export { DatasetWriter } from './files/dataset-writer.js';
export { DATASET_FORMATS, DATASET_WRITER_DEFAULTS } from './files/dataset-writer-options.js';
export type { DatasetFormat, DatasetWriterOptions, WrittenFile } from './files/dataset-writer-options.js';
export { writeDataset } from './files/write-dataset.js';
export type { WriteDatasetOptions } from './files/write-dataset.js';
export { DATASET_KINDS, SUSPENSION_RAW_COLUMNS, KLINE_SUB_PARTITIONS } from './files/dataset-columns.js';
export type { DatasetKind, DatasetRecord, KlineSubPartition } from './files/dataset-columns.js';
export { DatasetLog } from './files/dataset-log.js';
export type { DeltaStats } from './files/delta/delta-actions.js';
export type {
  DatasetLogOptions,
  DatasetTransaction,
  FileSummary,
  LogChange,
} from './files/dataset-log-options.js';
// One table, several writers: each claims its series in the log; a second one meets a refusal.
export { IF_OWNED, TABLE_WRITER_DEFAULTS } from './files/table-writer.js';
export type { IfOwned, TableClaimOptions, TableWriter, TableWriterOptions } from './files/table-writer.js';
export { TableOwnedError } from './files/table-claims.js';
export { LOG_OPERATIONS } from './files/dataset-log-format.js';
export type {
  LogEntry,
  LogFile,
  LogOperation,
  LogSnapshot,
  SeriesWatermark,
} from './files/dataset-log-format.js';
export { compactDataset } from './files/compact-dataset.js';
export type { CompactDatasetOptions, CompactedPartition } from './files/compact-dataset.js';
export { vacuumDataset, VACUUM_DEFAULT_RETENTION_MS } from './files/vacuum-dataset.js';
export type { VacuumDatasetOptions, VacuumResult } from './files/vacuum-dataset.js';
export type { ObjectStore, StoredObject } from './files/storage/object-store.js';
export { FileSinkError, FILE_SINK_ERROR_CODES } from './files/file-sink-error.js';
export type { FileSinkErrorCode } from './files/file-sink-error.js';
// Kafka: topics P.kline / P.depth / P.suspension (contract.md "Kafka"), idempotent, acks=all.
export { KafkaSink, KAFKA_SINK_DEFAULTS, KAFKA_DRIVERS } from './kafka/kafka-sink.js';
export type {
  KafkaSinkOptions,
  KafkaSinkStats,
  KafkaSinkLogger,
  KafkaDriverName,
  KafkaDriverFactory,
} from './kafka/kafka-sink.js';
export { toKafka, TO_KAFKA_DEFAULTS } from './kafka/to-kafka.js';
// Kafka K-lines committed in checkpoints: exactly once (transactions + a watermark topic) or at least once.
export { KafkaKlineSink } from './kafka/kafka-kline-sink.js';
export type { KafkaKlineSinkStats } from './kafka/kafka-kline-sink-stats.js';
export { KAFKA_KLINE_SINK_DEFAULTS, KAFKA_DELIVERIES } from './kafka/kafka-kline-sink-options.js';
export type { KafkaKlineSinkOptions, KafkaDelivery } from './kafka/kafka-kline-sink-options.js';
export { KafkaKlineSinkError, KAFKA_KLINE_SINK_ERROR_CODES } from './kafka/kafka-kline-sink-error.js';
export type { KafkaKlineSinkErrorCode } from './kafka/kafka-kline-sink-error.js';
export type {
  KafkaTransactionalDriver,
  KafkaTransactionalDriverOptions,
  KafkaTransactionalDriverFactory,
  KafkaCommittedRecord,
} from './kafka/kafka-transactional-driver.js';
export type { ToKafkaOptions } from './kafka/to-kafka.js';
export { KAFKA_TOPIC_KINDS } from './kafka/to-kafka-message.js';
export type {
  KafkaTopicKind,
  KafkaRecord,
  KafkaMessage,
  KafkaMessageValue,
  KafkaValueSerializer,
  KlineMessageValue,
  DepthMessageValue,
  LevelMessageValue,
  SuspensionMessageValue,
} from './kafka/to-kafka-message.js';
export { KAFKA_COMPRESSIONS } from './kafka/kafka-producer-driver.js';
export type {
  KafkaCompression,
  KafkaTopicSpec,
  KafkaProducerDriver,
  KafkaDriverOptions,
} from './kafka/kafka-producer-driver.js';
export { KafkaDeliveryError } from './kafka/kafka-delivery-error.js';
// Avro values in the Confluent wire format, schemas from a schema registry (subjects `<topic>-value`).
export {
  SchemaRegistrySerializer,
  SCHEMA_REGISTRY_DEFAULTS,
} from './kafka/schema-registry/schema-registry-serializer.js';
export type { SchemaRegistrySerializerOptions } from './kafka/schema-registry/schema-registry-serializer.js';
export { SchemaRegistryError } from './kafka/schema-registry/schema-registry-error.js';
export { AVRO_SCHEMAS } from './kafka/schema-registry/avro-schemas.js';
export type { AvroRecordSchema, AvroField } from './kafka/schema-registry/avro-schemas.js';
// Secured clusters: TLS and SASL.
export { KAFKA_SASL_MECHANISMS } from './kafka/kafka-security.js';
export type { KafkaSaslMechanism, KafkaSaslOptions, KafkaTlsOptions } from './kafka/kafka-security.js';
export { KafkaSinkClosedError } from './kafka/kafka-sink-closed-error.js';
// The Kafka clients, the AWS SDK, the schema registry client and the Parquet and Arrow libraries are
// optional peer dependencies, installed by the projects that use their parts.
export { MissingPackageError } from './missing-package-error.js';
