// What the http room reads of the node it serves: the node room's ServerHandle has all of it (the
// node starts its HTTP listener with itself). Declared here, with the types of the rooms that own
// each part, so that http depends on the rooms below it and not on the node's assembly.
import type { ClientQuotaManager, MetadataView } from '../broker/index.js';
import type { BrokerConfig } from '../config/index.js';
import type { GroupCoordinatorService, SharePartitionManager } from '../coordinator/index.js';
import type { MetadataImage } from '../metadata/index.js';
import type { NetworkStats, RequestMetrics } from '../network/index.js';
import type { QuorumDescription, RaftDriver } from '../raft/index.js';
import type { RegistryState } from '../registry/index.js';
import type { MirrorMetrics } from '../mirror/index.js';
import type { LinkManager } from '../link/index.js';
import type { ReplicaManager } from '../replication/index.js';
import type { LogDirSpaceView, LogFlushStats } from '../storage/index.js';

export interface NodeHandle {
  readonly nodeId: number;
  readonly listeners: readonly { name: string; host: string; port: number; securityProtocol: string }[];
  /** The configuration the node runs with. */
  readonly config: BrokerConfig;
  /** The broker, on a node with the broker role. */
  readonly broker: {
    readonly replicaManager: ReplicaManager;
    readonly groups: GroupCoordinatorService;
    /** Share groups' share-partitions led here (KIP-932). */
    readonly share: { readonly manager: SharePartitionManager };
    readonly clientQuotas: ClientQuotaManager;
    /** Registration and heartbeats (null until the broker registers). */
    readonly lifecycle: { readonly brokerEpoch: bigint; readonly state: string } | null;
  } | null;
  /** The metadata log and this node's replay of it (a node with a data directory). */
  readonly metadata: {
    readonly image: MetadataImage;
    readonly leaderId: number | undefined;
    readonly raft: RaftDriver;
    view(): MetadataView;
    offset(): bigint;
    describeQuorum(): QuorumDescription;
  } | null;
  /** The controller hosted here (it may be a standby). */
  readonly controllerService: {
    readonly isActive: boolean;
    /** Whether each broker heartbeats within its session; null unless this controller is active. */
    brokerSessionsAlive(brokerIds: Iterable<number>): Map<number, boolean> | null;
  } | null;
  /** controller_mutation_rate as this node's controller charges it. */
  readonly controllerMutationQuotas: ClientQuotaManager | null;
  readonly stats: NetworkStats;
  readonly requestMetrics: RequestMetrics;
  /** What the node's listeners serve (ApiVersions' ranges): /metrics has a series for each from start-up. */
  readonly router: { supportedVersions(): readonly { apiKey: number; minVersion: number; maxVersion: number }[] };
  readonly logFlushStats: LogFlushStats | null;
  /** Each log directory's free space against log.dir.min.free.bytes and its state. */
  logDirs(): LogDirSpaceView[];
  /** The schema registry this node serves (its replayed copy of `_schemas`), or null. */
  readonly schemaRegistry: { readonly state: RegistryState; hasLocalCopy(): boolean } | null;
  /** MirrorMaker 2's engine in this node (mirror.enable), or null. */
  readonly mirror: { readonly metrics: MirrorMetrics } | null;
  /** Cluster links: the mirror partitions this node leads and their progress, or null (no broker here). */
  readonly links: Pick<LinkManager, 'status' | 'prometheus'> | null;
}

/** A node's HTTP listener, as the node holds it once started. */
export interface HttpListener {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}
