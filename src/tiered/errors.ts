// The tiered room's typed errors. Handlers map them to Kafka codes later (a failed remote read is
// KAFKA_STORAGE_ERROR, retriable); nothing here knows about responses.

/** Anything that went wrong talking to the remote store (Kafka's RemoteStorageException). */
export class RemoteStorageError extends Error {
  override name = 'RemoteStorageError';
  /** True when trying again later may succeed (the store was down, slow or throttling). */
  readonly retriable: boolean;
  constructor(message: string, options: { retriable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retriable = options.retriable ?? true;
  }
}

/** The object (segment, index) does not exist in the store (Kafka's RemoteResourceNotFoundException). */
export class RemoteResourceNotFoundError extends RemoteStorageError {
  override name = 'RemoteResourceNotFoundError';
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retriable: false, ...options });
  }
}

export type RemoteLogMetadataErrorCode =
  | 'INVALID_TRANSITION'
  | 'UNKNOWN_SEGMENT'
  | 'UNKNOWN_PARTITION'
  | 'INVALID_METADATA'
  | 'MALFORMED_RECORD';

/**
 * A remote log metadata event the state machine refuses. The state is unchanged when it is thrown,
 * which is what Kafka's cache does with such an event (it logs and drops it).
 */
export class RemoteLogMetadataError extends Error {
  override name = 'RemoteLogMetadataError';
  constructor(readonly code: RemoteLogMetadataErrorCode, message: string) {
    super(message);
  }
}

/** A wait on `__remote_log_metadata` that ended unfinished: the manager closed, or the event was not replayed in time. */
export class RemoteLogMetadataWaitError extends Error {
  override name = 'RemoteLogMetadataWaitError';
  constructor(readonly reason: 'closed' | 'timeout', message: string) {
    super(message);
  }
}
