/**
 * zstd, lz4 and snappy for kafkajs, which ships only gzip. zstd comes from `node:zlib` (Node
 * ≥ 22.15), lz4 (frame format) and snappy from @platformatic/wasm-utils (WebAssembly, no native
 * build; the same codecs @platformatic/kafka uses). kafkajs keeps codecs in one module-wide
 * table, so they are registered once per process, on first use.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { kafkajsLibrary, wasmCodecs } from './kafka-clients.js';

interface Codec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

// Java clients and librdkafka may frame snappy in xerial's stream format; decode both.
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
function snappyDecode(data: Buffer): Buffer {
  const { snappyDecompress } = wasmCodecs();
  if (!data.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC)) return snappyDecompress(data);
  const chunks: Buffer[] = [];
  for (let at = 16; at + 4 <= data.length;) {
    const len = data.readUInt32BE(at);
    at += 4;
    chunks.push(snappyDecompress(data.subarray(at, at + len)));
    at += len;
  }
  return Buffer.concat(chunks);
}

let registered = false;

/** Whether this Node has zstd in `node:zlib`. */
export function hasZstd(): boolean {
  return typeof zlib.zstdCompress === 'function';
}

/** Registers the zstd (where Node has it), lz4 and snappy codecs with kafkajs; idempotent. */
export function registerKafkajsCodecs(): void {
  if (registered) return;
  registered = true;
  const { CompressionCodecs, CompressionTypes } = kafkajsLibrary();
  const { lz4Compress, lz4Decompress, snappyCompress } = wasmCodecs();
  const table = CompressionCodecs as unknown as Record<number, () => Codec>;
  const lz4: Codec = {
    compress: async (e) => lz4Compress(e.buffer),
    decompress: async (b) => lz4Decompress(b),
  };
  const snappy: Codec = {
    compress: async (e) => snappyCompress(e.buffer),
    decompress: async (b) => snappyDecode(b),
  };
  table[CompressionTypes.LZ4] = () => lz4;
  table[CompressionTypes.Snappy] = () => snappy;
  if (hasZstd()) {
    const compress = promisify(zlib.zstdCompress);
    const decompress = promisify(zlib.zstdDecompress);
    const zstd: Codec = { compress: (e) => compress(e.buffer), decompress: (b) => decompress(b) };
    table[CompressionTypes.ZSTD] = () => zstd;
  }
}
