// The records room's door: RecordBatch v2 bytes, CRC32C, record iteration, building, codecs,
// control records, and the up-conversion of legacy (magic 0/1) message sets. See README.md for
// what is zero-copy and how numbers are represented.
import { limits } from '../util/index.js';
import { RecordBatchView } from './batch.js';
import { decompress } from './compression.js';
import { RecordsError } from './errors.js';
import { iterateRecords, type Record } from './records.js';

export { RecordsError, type RecordsErrorCode } from './errors.js';
export { crc32c, crc32cIsNative, crc32cImplementation, crc32cCombine, crc32cZerosOperator } from './crc32c.js';
export {
  RECORD_BATCH_HEADER_BYTES, LOG_OVERHEAD_BYTES, Off as BatchHeaderAt,
  ATTR_COMPRESSION_MASK, ATTR_TIMESTAMP_TYPE, ATTR_TRANSACTIONAL, ATTR_CONTROL, Compression, TimestampType,
  RecordBatchView, recordBatchAt, firstBatchProducer, iterateBatches, validateBatch, readInt64, writeInt64,
  type BatchProducer, type ValidateOptions,
} from './batch.js';
export { compress, decompress } from './compression.js';
export { RecordCursor, forEachRecord, iterateRecords, type Record, type RecordHeader } from './records.js';
export { buildRecordBatch, buildRecordBatchSync, NO_TIMESTAMP, type BuildBatchOptions, type RecordInput } from './builder.js';
export {
  convertLegacyMessageSet, readLegacyMessageSet, isLegacyMessageSet, crc32, fixLegacyLz4HeaderChecksum,
  LEGACY_RECORD_OVERHEAD_V0, LEGACY_RECORD_OVERHEAD_V1, type LegacyMessageSet,
} from './legacy.js';
export {
  buildControlBatch, parseControlRecord, parseControlRecordType, type ControlBatchOptions, type ControlRecordType,
} from './control.js';

/**
 * The batch's records section, decompressed when the batch is compressed. Uncompressed: a subarray
 * of the batch (no copy). Capped at `maxBytes` (limits.decompressedBytesMax by default).
 */
export async function decompressBatchBody(view: RecordBatchView, maxBytes: number = limits.decompressedBytesMax): Promise<Buffer> {
  const raw = view.body();
  const codec = view.compression;
  if (codec > 4) throw new RecordsError('UNSUPPORTED_COMPRESSION_TYPE', `unknown compression codec ${codec}`);
  return decompress(codec, raw, maxBytes);
}

/** Decompresses and decodes every record of one batch. */
export async function readRecords(view: RecordBatchView): Promise<Record[]> {
  const body = await decompressBatchBody(view);
  return Array.from(iterateRecords(view, body));
}
