// The storage layer's own error type. Handlers map `kind` to Kafka error codes; nothing below
// them knows the protocol.
export type StorageErrorKind =
  | 'KAFKA_STORAGE_ERROR' // an I/O error; the log directory is offline
  | 'OFFSET_OUT_OF_RANGE'
  | 'OFFSET_MOVED_TO_TIERED_STORAGE' // at or above the log start offset, below the local log start: only in the remote tier
  | 'CORRUPT_MESSAGE'
  | 'INVALID_RECORD'
  | 'RECORD_LIST_TOO_LARGE'
  | 'INVALID_TIMESTAMP'
  | 'NOT_CONTIGUOUS' // a follower append that does not start at the log end offset
  | 'NOT_LEADER_OR_FOLLOWER' // a leader's append whose caller no longer leads at its epoch once the records are validated
  | 'UNSUPPORTED_COMPRESSION_TYPE'
  | 'UNSUPPORTED_FOR_MESSAGE_FORMAT'
  | 'INVALID_PRODUCER_EPOCH'
  | 'OUT_OF_ORDER_SEQUENCE_NUMBER'
  | 'TRANSACTION_COORDINATOR_FENCED'; // a marker from a coordinator older than one already seen

/** A record that made its batch be refused: its index among the records of the append (KIP-467). */
export interface RecordError { batchIndex: number; message: string }

export class StorageError extends Error {
  override name = 'StorageError';
  /** For INVALID_RECORD and INVALID_TIMESTAMP: which records were at fault (Produce v8+ reports them). */
  readonly recordErrors: readonly RecordError[];
  constructor(readonly kind: StorageErrorKind, message: string, options?: { cause?: unknown; recordErrors?: readonly RecordError[] }) {
    super(message, options);
    this.recordErrors = options?.recordErrors ?? [];
  }
}

/**
 * The error for records refused one by one, worded as Kafka's LogValidator words it, so clients
 * and operators see the same text: the count and the first three record errors.
 */
export function recordValidationError(kind: 'INVALID_RECORD' | 'INVALID_TIMESTAMP', recordErrors: RecordError[]): StorageError {
  const shown = recordErrors.slice(0, 3).map((e) => `RecordError(batchIndex=${e.batchIndex}, message='${e.message}')`).join(', ');
  const message = kind === 'INVALID_TIMESTAMP'
    ? 'One or more records have been rejected due to invalid timestamp'
    : `One or more records have been rejected due to ${recordErrors.length} record errors in total, and only showing the first three errors at most: [${shown}]`;
  return new StorageError(kind, message, { recordErrors });
}

/** An error thrown by a FileSystem call: the errno-style code (ENOSPC, EIO, ...) and the path. */
export function ioErrorCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}
