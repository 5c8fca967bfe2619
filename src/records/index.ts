// The records room's door: RecordBatch v2 bytes, CRC32C, record iteration, building, codecs.
export { RecordsError, type RecordsErrorCode } from './errors.js';
export { crc32c } from './crc32c.js';
export {
  RECORD_BATCH_HEADER_BYTES, Compression, TimestampType, RecordBatchView, iterateBatches, validateBatch,
  type ValidateOptions,
} from './batch.js';
