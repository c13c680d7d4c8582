/**
 * The Kafka client libraries, loaded at first use rather than when `@quoteflow/sinks` is imported:
 * @platformatic/kafka compiles its JSON schemas with ajv as it loads (~0.4 s of CPU) and kafkajs
 * and the WebAssembly codecs add more, which every `quoteflow` command and every embedding paid at
 * start even when it never wrote to Kafka. Synchronous (`require` of an ES module, Node ≥ 22.12),
 * so the drivers' constructors and the exported config helpers keep their signatures. Each is an
 * optional peer dependency: a project without it gets a `MissingPackageError` naming it.
 */
import type * as PlatformaticKafkaModule from '@platformatic/kafka';
import type * as WasmUtilsModule from '@platformatic/wasm-utils';
import type * as KafkajsModule from 'kafkajs';
import { createRequire } from 'node:module';
import { requirePackagesOf } from '../../internal/optional-packages.js';

type PlatformaticKafka = typeof PlatformaticKafkaModule;
type Kafkajs = typeof KafkajsModule;
type WasmUtils = typeof WasmUtilsModule;

const load = createRequire(import.meta.url);
let platformatic: PlatformaticKafka | undefined;
let kafkajs: Kafkajs | undefined;
let wasmUtils: WasmUtils | undefined;

/** `@platformatic/kafka`, loaded once. */
export function platformaticKafka(): PlatformaticKafka {
  if (platformatic === undefined) requirePackagesOf('platformatic-kafka');
  return (platformatic ??= load('@platformatic/kafka') as PlatformaticKafka);
}

/** `kafkajs`, loaded once. */
export function kafkajsLibrary(): Kafkajs {
  if (kafkajs === undefined) requirePackagesOf('kafkajs');
  return (kafkajs ??= load('kafkajs') as Kafkajs);
}

/** `@platformatic/wasm-utils` (lz4 and snappy for kafkajs), loaded once. */
export function wasmCodecs(): WasmUtils {
  if (wasmUtils === undefined) requirePackagesOf('kafkajs-codecs');
  return (wasmUtils ??= load('@platformatic/wasm-utils') as WasmUtils);
}
