// Every limit a client can push against, in one table (TigerBeetle's habit). Units go last.

export const limits = {
  /** Largest request frame accepted (`socket.request.max.bytes` default). */
  requestBytesMax: 100 * 1024 * 1024,
  /** Longest array a decoder will accept before checking remaining bytes. */
  arrayLengthMax: 0x7fffffff,
  /** RecordBatch v2 header size in bytes. */
  recordBatchHeaderBytes: 61,
  /** Largest record count a single batch may claim. */
  recordBatchRecordsMax: 1 << 24,
  /** Largest decompressed batch body we will inflate. */
  decompressedBytesMax: 256 * 1024 * 1024,
  /** Requests of one connection being handled at once; reading pauses beyond this. */
  inFlightRequestsPerConnectionMax: 16,
  /**
   * A request frame up to this size gets its whole buffer when its size prefix arrives (one copy
   * per chunk, no join); larger ones are buffered as they arrive, so a client cannot make a
   * connection hold memory it has not sent beyond this.
   */
  requestPreallocateBytesMax: 2 * 1024 * 1024,
  /** Response bytes queued on one socket before we stop reading from it (a slow reader). */
  socketWriteBufferBytesMax: 64 * 1024 * 1024,
  /**
   * Fetched record batches are read into slabs of this size that are reused once their response
   * is written (a partition's read up to this size shares or takes a slab; a larger one, e.g. a
   * single batch above it, gets its own buffer). Kafka's max.partition.fetch.bytes default.
   */
  responseSlabBytes: 1024 * 1024,
  /** Slabs kept for reuse per listener when no response holds them (memory kept after a burst). */
  responseSlabsFreeMax: 64,
} as const;
