// What handlers need from the rest of the broker, as narrow interfaces. The server wires the
// metadata image, the controller and the replica manager behind these, so handlers stay pure
// functions of (request, context) and can be tested with plain objects.

export interface BrokerEndpoint {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

export interface PartitionView {
  partition: number;
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
  /** KIP-966's eligible leader replicas and last known ELR (absent: none). */
  elr?: number[];
  lastKnownElr?: number[];
}

export interface TopicView {
  name: string;
  id: string;
  isInternal: boolean;
  partitions: PartitionView[];
}

/** One consistent view of the cluster metadata for the length of a request. */
export interface MetadataView {
  clusterId: string;
  /** The controller as clients are told it: the active controller when it is a live broker, else a live broker (-1: none). */
  controllerId: number;
  /** Unfenced registered brokers reachable on the given listener ('': all of them, on their first listener). */
  brokers(listenerName: string): BrokerEndpoint[];
  topics(): Iterable<TopicView>;
  topic(name: string): TopicView | undefined;
  topicById(id: string): TopicView | undefined;
  /** Dynamic configs of a resource (2 topic, 4 broker; name '' is the cluster default). */
  configs(resourceType: number, resourceName: string): ReadonlyMap<string, string>;
  /** Finalized feature levels (a feature at level 0 is absent) and the metadata offset they hold at (ApiVersions' epoch; -1 when none). */
  features(): FinalizedFeatures;
}

export interface FinalizedFeatures { epoch: bigint; levels: ReadonlyMap<string, number> }

/** One partition's share of a Produce request. */
export interface ProduceEntry {
  topic: string;
  partition: number;
  /** The RecordBatch bytes exactly as the client sent them. */
  records: Buffer;
  /** A legacy (magic 0/1) message set from Produce v0-2: the replica manager up-converts it. */
  legacyMessageSet?: boolean;
}

export interface PartitionProduceResult {
  errorCode: number;
  errorMessage: string | null;
  baseOffset: bigint;
  /** -1 unless the topic uses LogAppendTime. */
  logAppendTimeMs: bigint;
  logStartOffset: bigint;
  recordErrors: { batchIndex: number; batchIndexErrorMessage: string | null }[];
}

export interface ProducePartitionsParams {
  acks: number;
  timeoutMs: number;
  transactionalId: string | null;
  entries: ProduceEntry[];
  /** Produce v12+ (transaction version 2): a transactional batch's partition is added to the transaction, not only verified. */
  addToTransaction?: boolean;
  /** Produce v11+ (KIP-890): the client handles TRANSACTION_ABORTABLE; older versions get INVALID_TXN_STATE instead. */
  transactionAbortableSupported?: boolean;
}

export const produceFailure = (errorCode: number, errorMessage: string | null = null): PartitionProduceResult =>
  ({ errorCode, errorMessage, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [] });

export interface FetchPartitionParams {
  topic: string;
  partition: number;
  fetchOffset: bigint;
  partitionMaxBytes: number;
  currentLeaderEpoch: number;
  lastFetchedEpoch: number;
  logStartOffset: bigint;
}

export interface FetchParams {
  /** -1 for consumers; a broker id for followers. */
  replicaId: number;
  /** A follower's broker epoch (Fetch v15+ ReplicaState.ReplicaEpoch); -1 when not sent. */
  replicaEpoch?: bigint;
  /** A consumer's rack (Fetch v11+ RackId) and listener: followers may serve it (KIP-392). */
  clientMetadata?: { rackId: string; listenerName: string };
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  /** 0 read_uncommitted, 1 read_committed. */
  isolationLevel: number;
  partitions: FetchPartitionParams[];
  /** Where read record bytes go (the request's response memory); fresh buffers when absent. */
  alloc?: (bytes: number) => Buffer;
}

export interface PartitionFetchResult {
  errorCode: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  abortedTransactions: { producerId: bigint; firstOffset: bigint }[] | null;
  preferredReadReplica: number;
  divergingEpoch?: { epoch: number; endOffset: bigint };
  records: Buffer | null;
}

export const fetchFailure = (errorCode: number): PartitionFetchResult => ({
  errorCode, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, abortedTransactions: null, preferredReadReplica: -1, records: null,
});

/** ListOffsets sentinels (KIP-734 max timestamp, KIP-1005 earliest-local / latest-tiered). */
export const ListOffsetsTimestamp = { Latest: -1n, Earliest: -2n, MaxTimestamp: -3n, EarliestLocal: -4n, LatestTiered: -5n } as const;

export interface ListOffsetsParams {
  topic: string;
  partition: number;
  currentLeaderEpoch: number;
  timestamp: bigint;
  isolationLevel: number;
  replicaId: number;
}

export interface ListOffsetsResult {
  errorCode: number;
  timestamp: bigint;
  offset: bigint;
  leaderEpoch: number;
}

/** A log directory as DescribeLogDirs reports it. */
export interface LogDirDescription {
  /** Absolute path. */
  path: string;
  offline: boolean;
  partitions: { topic: string; partition: number; sizeBytes: number; offsetLag: number }[];
  /** The volume's size and free space for unprivileged users; -1 when unknown. */
  totalBytes: number;
  usableBytes: number;
}

/** Topic administration, carried out by the controller and visible once its records are applied. */
export interface TopicAdmin {
  /** `caller`: the client the change is for, when a broker forwards it (see ControllerChannel). */
  createTopics(request: import('../protocol/index.js').CreateTopicsRequest, apiVersion: number, caller?: import('./envelope.js').ForwardedFor):
    Promise<import('../protocol/index.js').CreateTopicsResponseCreatableTopicResult[]>;
  deleteTopics(targets: { name: string | null; topicId: string }[], caller?: import('./envelope.js').ForwardedFor):
    Promise<import('../protocol/index.js').DeleteTopicsResponseDeletableTopicResult[]>;
  createPartitions(topics: import('../protocol/index.js').CreatePartitionsRequestCreatePartitionsTopic[], validateOnly: boolean, caller?: import('./envelope.js').ForwardedFor):
    Promise<import('../protocol/index.js').CreatePartitionsResponseCreatePartitionsTopicResult[]>;
}

/** Consumer groups: the coordinator service, and creation of `__consumer_offsets` on first use. */
export interface GroupServices {
  groups: import('../coordinator/index.js').GroupCoordinatorService;
  metadata(): MetadataView;
  /** Creates `__consumer_offsets` when it does not exist; resolves with 0 or the error code. */
  ensureOffsetsTopic(): Promise<number>;
  /** The share coordinator's state wherever it is led (deleting a share group deletes its share-partitions' state). */
  sharePersister?: ShareStateStore;
}

/** The share groups' admin APIs (90-92): the group coordinator, the share coordinator's state wherever it is led, and a partition's high watermark where this broker leads it. */
export interface ShareAdminServices extends GroupServices {
  sharePersister: ShareStateStore;
  /** The high watermark of a partition led here, else null (a share-partition's lag is computed where it is known). */
  highWatermark(topic: string, partition: number): number | null;
}

/** Share groups' data path (KIP-932): the share-partitions led here and the share sessions. */
export interface ShareServices {
  share: import('../coordinator/index.js').SharePartitionManager;
  shareSessions: import('./share-sessions.js').ShareSessionCache;
  metadata(): MetadataView;
}

/**
 * The share coordinator on this broker (KIP-932's state RPCs 83-87, broker to broker): the state
 * of the share-partitions whose `__share_group_state` partition is led here. NOT_COORDINATOR
 * when it is led elsewhere; the caller finds the leader itself.
 */
export interface ShareStateStore {
  initialize(k: import('../coordinator/index.js').SharePartitionKey, stateEpoch: number, startOffset: number): Promise<number>;
  read(k: import('../coordinator/index.js').SharePartitionKey, leaderEpoch: number): Promise<import('../coordinator/index.js').ReadResult>;
  write(p: import('../coordinator/index.js').WriteParams): Promise<number>;
  delete(k: import('../coordinator/index.js').SharePartitionKey): Promise<number>;
  /** The start offset and state epoch only (ReadShareGroupStateSummary). */
  summary(k: import('../coordinator/index.js').SharePartitionKey): Promise<import('../coordinator/index.js').ReadResult>;
}

export interface ShareStateServices {
  shareState: ShareStateStore;
}

/** One transaction's markers as WriteTxnMarkers carries them. */
export interface TxnMarkerParams {
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  commit: boolean;
  partitions: { topic: string; partition: number }[];
}

/** Transactions: the coordinator service, `__transaction_state` creation, markers and producer state. */
export interface TxnServices extends GroupServices {
  txn: import('../coordinator/index.js').TxnCoordinatorService;
  /** Creates `__transaction_state` when it does not exist; resolves with 0 or the error code. */
  ensureTransactionTopic(): Promise<number>;
  /** Writes the markers to the partitions led here; an error code per partition. */
  writeTxnMarkers(m: TxnMarkerParams): Promise<{ topic: string; partition: number; errorCode: number }[]>;
  /**
   * The transaction coordinator's answer for partitions of a producer's transaction, here or on the
   * broker that leads the id's `__transaction_state` partition; `add` adds them (transaction version 2).
   */
  checkTxnPartitions(p: { transactionalId: string; producerId: bigint; producerEpoch: number; partitions: { topic: string; partition: number }[] },
    add: boolean): Promise<import('../coordinator/index.js').PartitionError[]>;
  activeProducers(topic: string, partition: number): { errorCode: number; producers: import('../replication/index.js').ActiveProducer[] };
}

/** For the controller's own APIs (62, 63, 67): the controller in this process, never a forwarding one. */
export interface ControllerServices {
  localController: import('./controller-channel.js').ControllerChannel;
}

/** The ACL admin APIs (29-31): whether an authorizer is on, the ACLs of the current image, and the controller that changes them. */
export interface AclServices {
  aclAdmin: {
    /** False without `authorizer.class.name`: the ACL APIs answer SECURITY_DISABLED. */
    readonly enabled: boolean;
    acls(): import('../metadata/index.js').AclsImage;
  };
  controller: import('./controller-channel.js').ControllerChannel;
}
