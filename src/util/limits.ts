// Every limit a client can push against, in one table (TigerBeetle's habit). Units go last.

export const limits = {
  /** Largest request frame accepted (`socket.request.max.bytes` default). */
  requestBytesMax: 100 * 1024 * 1024,
  /** Longest array a decoder will accept before checking remaining bytes. */
  arrayLengthMax: 0x7fffffff,
  /** Largest record count a single batch may claim. */
  recordBatchRecordsMax: 1 << 24,
  /** Largest decompressed batch body we will inflate. */
  decompressedBytesMax: 256 * 1024 * 1024,
  /**
   * Longest a TLS handshake may take before the connection is closed (Node's default is two
   * minutes), so half-open handshakes cannot hold connection slots.
   */
  tlsHandshakeTimeoutMs: 10_000,
  /** Ciphertext one socket read of a TLS connection takes (the addon's sessions; src/network/socket-server.ts). */
  tlsCiphertextReadBytes: 64 * 1024,
  /**
   * Plaintext of a response encrypted before it goes to the socket (the addon's sessions): a large
   * fetch response is sent in pieces of this size, so the client decrypts one while the next is
   * encrypted.
   */
  tlsEncryptPieceBytes: 256 * 1024,
  /**
   * Addresses whose connection_creation_rate is measured at once (a client quota per address):
   * the least recently seen are forgotten beyond this, so clients from many addresses cannot grow it.
   */
  connectionRateAddressesMax: 100_000,
  /**
   * Connections accepted and waiting out max.connection.creation.rate, per listener (Kafka leaves
   * them in the listen backlog); beyond this a new one is closed at once.
   */
  connectionsAcceptQueuedMax: 1024,
  /** Connections over their address's connection_creation_rate waiting to be closed; beyond this they are closed at once. */
  connectionThrottledClosesMax: 1024,
  /** Requests of one connection being handled at once; reading pauses beyond this. */
  inFlightRequestsPerConnectionMax: 16,
  /**
   * A request frame up to this size gets its whole buffer when its size prefix arrives (one copy
   * per chunk, no join); larger ones are buffered as they arrive, so a client cannot make a
   * connection hold memory it has not sent beyond this.
   */
  requestPreallocateBytesMax: 2 * 1024 * 1024,
  /**
   * Bytes of request frames kept for reuse (a broker-wide pool of power-of-two buffers up to
   * requestPreallocateBytesMax): produce frames go back to it once their records are in the log.
   */
  framePoolBytesMax: 64 * 1024 * 1024,
  /** Response bytes queued on one socket before we stop reading from it (a slow reader). */
  socketWriteBufferBytesMax: 64 * 1024 * 1024,
  /**
   * Fetched record batches are read into pooled slabs that are reused once their response is
   * written: this size (Kafka's max.partition.fetch.bytes default) and its doublings up to the
   * max; a partition's read shares a slab with others or takes one of its size class, and a read
   * above the max (a single huge batch) gets its own buffer.
   */
  responseSlabBytes: 1024 * 1024,
  responseSlabBytesMax: 16 * 1024 * 1024,
  /** Free slabs kept for reuse by the broker's network server when no response holds them. */
  responseSlabsFreeBytesMax: 64 * 1024 * 1024,
  /** The kept slabs are dropped when no response took one for this long (no memory held after a burst). */
  responseSlabsIdleMs: 30_000,
  /**
   * A replication quota (leader/follower.replication.throttled.rate) counts its rate over at least
   * this much time: how much a throttled copy may move at once after being idle, in time at the rate.
   */
  replicationQuotaElapsedMinMs: 100,
  /** File descriptors the storage engine keeps open (segment files open lazily, close least recently used first). */
  openFilesMax: 4096,
  /**
   * New partitions' partition.metadata writes (each a write, an fsync and two directory fsyncs) in
   * the thread pool at once: the metadata log's fsyncs share its four threads.
   */
  partitionMetadataWritesInFlightMax: 2,
  /** Arrays whose elements may encode to zero bytes are capped at this many elements when decoded. */
  emptyArrayElementsMax: 1024,
  /**
   * Partitions one request may create (CreateTopics, CreatePartitions: POLICY_VIOLATION beyond it)
   * or name in AddPartitionsToTxn (INVALID_REQUEST beyond it).
   */
  partitionsPerRequestMax: 100_000,
  /**
   * Partitions in one DescribeTopicPartitions response, whatever the request's limit (Kafka's
   * `max.request.partition.size.limit` default); the rest come with the next cursor.
   */
  describeTopicPartitionsResponsePartitionsMax: 2000,
  /** Fetches parked until data arrives or max_wait_ms passes; one more is answered at once. */
  fetchPurgatoryOperationsMax: 100_000,
  /** acks=all produces parked until the high watermark passes them; one more fails. */
  producePurgatoryOperationsMax: 100_000,
  /** Coordinator timers fired by one expiry call (the rest fire on the next). */
  coordinatorTimersPerExpiryMax: 100_000,
  /** Reads that loading one coordinator partition may take before it gives up. */
  coordinatorLoadReadsMax: 1_000_000,
  /** Transactions the transaction coordinator aborts for timing out in one scan; the next scan follows at once. */
  txnAbortsPerTickMax: 1000,
  /** Expired transactional ids removed in one scan; the next scan follows at once. */
  txnExpirationsPerTickMax: 1000,
  /** Spare producer ids the transaction coordinator holds (a burst of InitProducerIds may need this many at once). */
  spareProducerIdsMax: 1024,
  /** API keys below this are counted per API in the request metrics (Kafka's go up to 9xx only for internal ones); others are not counted. */
  apiKeyBound: 128,
  /** API versions below this are counted per version in the request metrics. */
  apiVersionBound: 32,
  /** Bytes of JSON one HTTP admin answer may hold (a topic list of a big cluster fits; the rest is cut with a note). */
  httpResponseBytesMax: 16 * 1024 * 1024,
  /** Bytes of a request body the HTTP admin API reads (a test message with its headers fits); more is refused with 413. */
  httpRequestBodyBytesMax: 1024 * 1024,
  /** Records one message-browser answer holds (newest first), and the record bytes (keys, values, headers) it may carry. */
  httpMessagesMax: 500,
  httpMessagesBytesMax: 4 * 1024 * 1024,
  /** Consumer groups whose lag one /metrics scrape or /v1/groups answer computes on this node. */
  httpGroupsLagMax: 1000,
  /**
   * Transactional ids a partition leader holds waiting to be verified with one coordinator broker
   * while a request to it is in flight; one more is told to retry.
   */
  txnVerificationsPendingMax: 10_000,
  /**
   * Client quota sensors (one per quota type and user/client-id the quota is shared by) a broker
   * keeps; beyond this the least recently used go (Kafka expires them after an hour idle).
   */
  clientQuotaSensorsMax: 100_000,
  /**
   * Longest a client is throttled for one response. Kafka does not cap byte-rate throttles, but a
   * quota of 0 would make the throttle infinite; Kafka's int cast of it is about this long.
   */
  clientQuotaThrottleMsMax: 0x7fffffff,
  /** Quota entries one DescribeClientQuotas / AlterClientQuotas request may name. */
  clientQuotaEntriesPerRequestMax: 10_000,
  /** Authorization decisions one ACL index caches (over every principal); past it the cache starts over. */
  aclDecisionsCachedMax: 100_000,
  /** ACL creations or deletion filters in one CreateAcls/DeleteAcls request. */
  aclsPerRequestMax: 10_000,
  /**
   * Largest SASL token a client may send before it has authenticated (Kafka's
   * sasl.server.max.receive.size): any bigger frame on an unauthenticated SASL connection closes it,
   * so nobody who has not logged in can make the broker buffer a 100 MB request.
   */
  saslTokenBytesMax: 524_288,
  /** Characters of one sasl.jaas.config value the parser reads. */
  saslJaasConfigCharsMax: 1024 * 1024,
  /** SCRAM iterations accepted in credentials (Kafka's ScramMechanism minimum and our maximum, which bounds a handshake's CPU). */
  scramIterationsMin: 4096,
  scramIterationsMax: 16_384,
  /** Longest SCRAM user name, in characters (a credential and an AlterUserScramCredentials entry). */
  scramUserNameCharsMax: 1024,
  /** Failed SASL connections waiting out connection.failed.authentication.delay.ms at once; more are closed at once. */
  saslDelayedClosesMax: 10_000,
  /**
   * Largest chunk a remote log read fetches at once (rsm.config.chunk.size): each one is a buffer
   * in memory and a cache entry.
   */
  remoteChunkBytesMax: 64 * 1024 * 1024,
  /**
   * Largest remote index object read whole into memory. Offset and time indexes are bounded by
   * segment.index.bytes (10 MiB by default); a transaction index or producer snapshot past this is
   * refused rather than buffered.
   */
  remoteIndexBytesMax: 256 * 1024 * 1024,
  /**
   * Partitions of one Fetch read from the remote tier (Kafka's DelayedRemoteFetch reads one): the
   * others are answered without records this time, so one fetch waits for at most one remote read
   * (remote.fetch.max.wait.ms), and fetch sessions rotate the rest to the front next time.
   */
  remotePartitionsPerFetchMax: 1,
  /** Parts of one S3 multipart upload (S3's own limit); the part size grows to stay under it. */
  s3MultipartPartsMax: 10_000,
  /**
   * Largest request body the schema registry's REST listener reads (a schema with its references'
   * names); a larger one is answered 413 before it is buffered whole.
   */
  registryRequestBytesMax: 4 * 1024 * 1024,
  /** Versions one subject may hold, soft-deleted ones included; a register beyond it gets 42205. */
  registryVersionsPerSubjectMax: 10_000,
  /**
   * Parsed request schemas the registry keeps (by type and text, without references), so the
   * register or lookup a producer repeats at every start does not parse again (an Avro parse
   * generates code: ~0.3-0.6 ms); least recently used first out. Longer texts are not kept.
   */
  registryParsedSchemasCachedMax: 1_000,
  registryParsedSchemaCachedBytesMax: 64 * 1024,
  /** How deep schema references may nest (a reference's references ...); deeper is an invalid schema (42201). */
  registryReferencesDepthMax: 32,
  /** Schemas an Avro/JSON/Protobuf walker visits in one compatibility check, so a hostile schema cannot spin the CPU. */
  registryCompatibilityStepsMax: 100_000,
  /** Partitions one share session (KIP-932) may hold; a ShareFetch adding more is INVALID_REQUEST. */
  sharePartitionsPerSessionMax: 10_000,
  /** A share session unused this long is evicted and its acquired records released (its member is gone). */
  shareSessionIdleMs: 120_000,
  /** Operations one `logline verify` run may record (the history is kept in memory and checked at the end). */
  verifyOpsMax: 1_000_000,
  /** Longest workload of one `logline verify` run. */
  verifyDurationMsMax: 24 * 3600 * 1000,
  /** Client processes of each kind in one `logline verify` run. */
  verifyProcessesMax: 64,
  /** `logline server` processes `logline verify --cluster` starts. */
  verifyClusterNodesMax: 9,
  /** Faults one `logline verify` run injects. */
  verifyFaultsMax: 10_000,
  /** Fetch rounds the mirror spends reading one of its internal topics to its end before it gives up (a deadline bounds it too). */
  mirrorReadRoundsMax: 100_000,
  /** Records and bytes of one batch the mirror writes to a target partition (under the target's default max.message.bytes). */
  mirrorBatchRecordsMax: 10_000,
  mirrorBatchBytesMax: 512 * 1024,
  /**
   * Source batches of at least this many bytes (up to the most, the target's default
   * max.message.bytes) the mirror passes on whole, records as bytes; smaller ones it reads and
   * writes in batches of its own (one batch per partition per Produce: passing small batches whole
   * would cost a round trip each).
   */
  mirrorWholeBatchBytesMin: 128 * 1024,
  mirrorWholeBatchBytesMax: 1024 * 1024,
  /** Bytes the mirror fetches per source partition in one Fetch (Kafka's max.partition.fetch.bytes). */
  mirrorFetchPartitionBytesMax: 1024 * 1024,
  /** Offset syncs the mirror writes at once (after one poll); older ones of a burst beyond it are dropped. */
  mirrorSyncsPerWriteMax: 5_000,
  /** Source partitions one mirror flow replicates; more are refused with an error in the status. */
  mirrorPartitionsMax: 10_000,
  /** Consumer groups one flow checkpoints (MirrorMaker 2 has no such limit; ours keeps memory bounded). */
  mirrorGroupsMax: 10_000,
} as const;
