// The storage layer's own error type. Handlers map `kind` to Kafka error codes; nothing below
// them knows the protocol.
export type StorageErrorKind =
  | 'KAFKA_STORAGE_ERROR' // an I/O error; the log directory is offline
  | 'OFFSET_OUT_OF_RANGE'
  | 'CORRUPT_MESSAGE'
  | 'INVALID_RECORD'
  | 'RECORD_LIST_TOO_LARGE'
  | 'INVALID_TIMESTAMP'
  | 'NOT_CONTIGUOUS' // a follower append that does not start at the log end offset
  | 'UNSUPPORTED_COMPRESSION_TYPE'
  | 'UNSUPPORTED_FOR_MESSAGE_FORMAT'
  | 'INVALID_PRODUCER_EPOCH'
  | 'OUT_OF_ORDER_SEQUENCE_NUMBER'
  | 'TRANSACTION_COORDINATOR_FENCED'; // a marker from a coordinator older than one already seen

export class StorageError extends Error {
  override name = 'StorageError';
  constructor(readonly kind: StorageErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** An error thrown by a FileSystem call: the errno-style code (ENOSPC, EIO, ...) and the path. */
export function ioErrorCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}
