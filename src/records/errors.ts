// The records room's own error type. Handlers map `code` to the Kafka error code of the same name.

export type RecordsErrorCode =
  | 'CORRUPT_MESSAGE'
  | 'INVALID_RECORD'
  | 'UNSUPPORTED_COMPRESSION_TYPE'
  | 'UNSUPPORTED_MAGIC';

export class RecordsError extends Error {
  override name = 'RecordsError';
  constructor(readonly code: RecordsErrorCode, message: string) {
    super(message);
  }
}
