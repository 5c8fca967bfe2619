// The metadata room's error type. Replaying a record that contradicts the image (a partition of a
// missing topic, a fence of an unknown broker) or decoding bytes that are not a metadata record
// raises a MetadataError; callers translate it at their edge.

export type MetadataErrorKind =
  | 'UNKNOWN_RECORD_TYPE'
  | 'UNSUPPORTED_VERSION'
  | 'MALFORMED_RECORD'
  | 'UNKNOWN_TOPIC'
  | 'UNKNOWN_PARTITION'
  | 'DUPLICATE_TOPIC'
  | 'UNKNOWN_BROKER'
  | 'STALE_BROKER_EPOCH'
  | 'UNKNOWN_ACL'
  | 'INVALID_RECORD';

export class MetadataError extends Error {
  constructor(readonly kind: MetadataErrorKind, message: string) {
    super(message);
    this.name = 'MetadataError';
  }
}
