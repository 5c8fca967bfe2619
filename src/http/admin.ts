// The read-only admin views behind /v1/...: plain JSON built from what this node holds (its
// metadata image, its partitions, its controller's sessions and its place in the metadata quorum).
// Each is a function of the node and the time, so the HTTP server only routes and serializes.
import type { PartitionView, TopicView } from '../broker/index.js';
import type { NodeHandle } from './node-handle.js';
import { produceRequestCounts, type ProduceRequestCount } from '../replication/index.js';
import type { LogDirSpaceView, PartitionLog } from '../storage/index.js';
import type { RemoteCacheStats, RemoteLogManager, TopicIdPartition } from '../tiered/index.js';

export interface Health { status: 'ok'; nodeId: number; roles: readonly string[] }

/** /v1/health: the process answers (liveness; nothing else is checked). */
export function health(node: NodeHandle): Health {
  return { status: 'ok', nodeId: node.nodeId, roles: rolesOf(node) };
}

export interface Readiness { ready: boolean; nodeId: number; reasons: string[]; brokerState?: string; brokerEpoch?: string; metadataOffset?: number }

/**
 * /v1/ready: a broker is ready once the controller has its registration, has unfenced it (which it
 * asks for only once its metadata has caught up to its registration) and it is not shutting down;
 * a controller-only node once the metadata quorum has a leader.
 */
export function readiness(node: NodeHandle): Readiness {
  const reasons: string[] = [];
  const md = node.metadata;
  if (md === null) return { ready: false, nodeId: node.nodeId, reasons: ['no metadata log'] };
  const broker = node.broker;
  if (broker === null) {
    if (md.leaderId === undefined) reasons.push('the metadata quorum has no leader');
    return { ready: reasons.length === 0, nodeId: node.nodeId, reasons };
  }
  const lifecycle = broker.lifecycle;
  const epoch = lifecycle?.brokerEpoch ?? -1n;
  const registration = md.image.cluster.brokers.get(node.nodeId);
  if (lifecycle === null || epoch < 0n) reasons.push('not registered with the controller');
  else if (registration === undefined || registration.epoch !== epoch) reasons.push(`broker epoch ${epoch} not in this node's metadata yet`);
  else if (registration.fenced) reasons.push('fenced');
  else if (registration.inControlledShutdown) reasons.push('in controlled shutdown');
  if (lifecycle !== null && lifecycle.state !== 'running') reasons.push(`broker state ${lifecycle.state}`);
  return {
    ready: reasons.length === 0, nodeId: node.nodeId, reasons,
    brokerState: lifecycle?.state ?? 'starting', brokerEpoch: String(epoch), metadataOffset: Number(md.offset()),
  };
}

export interface NodeView {
  nodeId: number;
  roles: readonly string[];
  /** Clients' Produce requests answered here by acks and idempotence (empty on a controller-only node). */
  produceRequests: ProduceRequestCount[];
  /** Per tiered topic led here: rolled segments not yet copied to remote storage (Kafka's RemoteCopyLagBytes/Segments). */
  remoteCopyLag: { topic: string; bytes: number; segments: number }[];
  /**
   * Tiered storage on this broker (null: remote.log.storage.system.enable is off): the bytes in the
   * tier per topic led here (Kafka's RemoteLogSizeBytes) and the read caches against their bounds.
   */
  tiered: {
    topics: { topic: string; remoteLogSizeBytes: number }[];
    chunkCache: RemoteCacheStats | null;
    indexCache: RemoteCacheStats | null;
  } | null;
  /** This node's log directories: free space against log.dir.min.free.bytes and their state (ok, low, full: produce refused, offline). */
  logDirs?: LogDirSpaceView[];
}

/** /v1/node: what this node alone observes (other nodes count their own). */
export function nodeView(node: NodeHandle): NodeView {
  const stats = node.broker?.replicaManager.stats;
  const rlm = node.broker?.replicaManager.remoteLog ?? null;
  const copyLag = rlm?.copyLag() ?? new Map<string, { bytes: number; segments: number }>();
  return {
    nodeId: node.nodeId, roles: rolesOf(node), produceRequests: stats === undefined ? [] : produceRequestCounts(stats),
    remoteCopyLag: [...copyLag].map(([topic, l]) => ({ topic, bytes: l.bytes, segments: l.segments })).sort((a, b) => a.topic.localeCompare(b.topic)),
    tiered: rlm === null ? null : tieredNode(rlm),
    logDirs: node.logDirs(),
  };
}

function tieredNode(rlm: RemoteLogManager): NonNullable<NodeView['tiered']> {
  const caches = rlm.cacheStats();
  return {
    topics: [...rlm.remoteLogSizeByTopic()].map(([topic, remoteLogSizeBytes]) => ({ topic, remoteLogSizeBytes })).sort((a, b) => a.topic.localeCompare(b.topic)),
    chunkCache: caches.chunk, indexCache: caches.index,
  };
}

export interface BrokerRow {
  id: number;
  incarnationId: string;
  brokerEpoch: string;
  endpoints: { name: string; host: string; port: number; securityProtocol: number }[];
  rack: string | null;
  fenced: boolean;
  inControlledShutdown: boolean;
  /** Heartbeating within broker.session.timeout.ms, as the active controller sees it; null when this node is not the active controller. */
  alive: boolean | null;
}

export interface BrokersView { nodeId: number; controllerId: number | null; activeController: boolean; brokers: BrokerRow[] }

/** /v1/brokers: every registration in this node's metadata, fenced ones included. */
export function brokers(node: NodeHandle): BrokersView {
  const md = node.metadata;
  if (md === null) return { nodeId: node.nodeId, controllerId: null, activeController: false, brokers: [] };
  const registrations = [...md.image.cluster.brokers.values()].sort((a, b) => a.id - b.id);
  const alive = node.controllerService?.brokerSessionsAlive(registrations.map((b) => b.id)) ?? null;
  return {
    nodeId: node.nodeId,
    controllerId: md.leaderId ?? null,
    activeController: alive !== null,
    brokers: registrations.map((b) => ({
      id: b.id, incarnationId: b.incarnationId, brokerEpoch: String(b.epoch),
      endpoints: b.endpoints.map((e) => ({ name: e.name, host: e.host, port: e.port, securityProtocol: e.securityProtocol })),
      rack: b.rack, fenced: b.fenced, inControlledShutdown: b.inControlledShutdown,
      alive: alive === null ? null : alive.get(b.id) ?? false,
    })),
  };
}

export interface ReplicaRow { id: number; logEndOffset: number | null; lag: number | null; lastFetchMsAgo: number | null; lastCaughtUpMsAgo: number | null }

export interface QuorumView {
  nodeId: number;
  /** This node's part: leader, follower, candidate, ... or observer (no vote). */
  role: string;
  leaderId: number | null;
  leaderEpoch: number;
  highWatermark: number;
  logEndOffset: number;
  appliedOffset: number;
  /** Replicas' progress is the leader's knowledge: null here unless this node leads. */
  voters: ReplicaRow[];
  observers: ReplicaRow[];
}

/** /v1/quorum: the metadata quorum; the voters' and observers' progress when this node leads it. */
export function quorum(node: NodeHandle, nowMs: number): QuorumView | null {
  const md = node.metadata;
  if (md === null) return null;
  const d = md.raft;
  const isLeader = d.role === 'leader';
  const q = md.describeQuorum();
  const row = (r: { nodeId: number; endOffset: number; lastFetchMs: number | undefined; lastCaughtUpMs?: number | undefined }): ReplicaRow => isLeader
    ? {
      id: r.nodeId, logEndOffset: r.endOffset, lag: Math.max(0, q.highWatermark - r.endOffset),
      lastFetchMsAgo: r.lastFetchMs === undefined ? null : Math.max(0, nowMs - r.lastFetchMs),
      lastCaughtUpMsAgo: r.lastCaughtUpMs === undefined ? null : Math.max(0, nowMs - r.lastCaughtUpMs),
    }
    : { id: r.nodeId, logEndOffset: null, lag: null, lastFetchMsAgo: null, lastCaughtUpMsAgo: null };
  const voterIds = new Set(d.core.voterSet.map((v) => v.id));
  return {
    nodeId: node.nodeId,
    role: voterIds.has(node.nodeId) ? d.role : 'observer',
    leaderId: d.leaderId ?? null,
    leaderEpoch: d.epoch,
    highWatermark: d.highWatermark,
    logEndOffset: d.core.log.endOffset,
    appliedOffset: d.appliedOffset,
    voters: isLeader ? q.voters.map(row) : [...voterIds].sort((a, b) => a - b).map((id) => row({ nodeId: id, endOffset: -1, lastFetchMs: undefined })),
    observers: q.observers.map(row),
  };
}

export interface PartitionRow extends PartitionView {
  /** Offsets where this node hosts a replica (a leader's are the partition's); null otherwise. */
  logStartOffset: number | null;
  logEndOffset: number | null;
  highWatermark: number | null;
  /** Whether the offsets come from the leader here, a follower here, or nowhere (null). */
  offsetsFrom: 'leader' | 'follower' | null;
  /** Bytes of the leader's replica on disk (DescribeLogDirs; null: unknown). */
  sizeBytes: number | null;
  /**
   * Tiered storage, where this node hosts a replica of a topic with remote.storage.enable (null
   * otherwise): the first offset on local disk (Kafka's local log start offset; ListOffsets -4),
   * the first offset in the remote tier (null: nothing copied yet), the highest offset copied
   * (ListOffsets -5; -1: none), and the bytes of its finished remote segments.
   */
  tiered: { localLogStartOffset: number; remoteLogStartOffset: number | null; highestOffsetInRemoteStorage: number; remoteSizeBytes: number } | null;
  /** The ISR is smaller than the replica set (kafka-topics --under-replicated-partitions). */
  underReplicated: boolean;
  /** No leader, or a leader whose replica is offline (kafka-topics --unavailable-partitions). */
  offline: boolean;
}

export interface TopicRow { name: string; topicId: string; internal: boolean; partitions: PartitionRow[] }

/** /v1/topics: every topic in this node's metadata, with what it knows of each partition. */
export function topics(node: NodeHandle): TopicRow[] | null {
  const md = node.metadata;
  if (md === null) return null;
  return [...md.view().topics()].map((t) => topicRow(node, t)).sort((a, b) => a.name.localeCompare(b.name));
}

/** /v1/topics/NAME, or null when there is no such topic. */
export function topic(node: NodeHandle, name: string): TopicRow | null {
  const t = node.metadata?.view().topic(name);
  return t === undefined ? null : topicRow(node, t);
}

function tieredRow(rlm: RemoteLogManager, tip: TopicIdPartition, log: PartitionLog): NonNullable<PartitionRow['tiered']> {
  const remote = rlm.remoteLogSummary(tip, log.logStartOffset);
  return {
    localLogStartOffset: log.localLogStartOffset, remoteLogStartOffset: remote.startOffset,
    highestOffsetInRemoteStorage: log.highestOffsetInRemoteStorage, remoteSizeBytes: remote.sizeBytes,
  };
}

function topicRow(node: NodeHandle, t: TopicView): TopicRow {
  const rm = node.broker?.replicaManager;
  const rlm = rm?.remoteLog ?? null;
  return {
    name: t.name, topicId: t.id, internal: t.isInternal,
    partitions: t.partitions.map((p) => {
      const local = rm?.partition(t.name, p.partition);
      return {
        partition: p.partition, leader: p.leader, leaderEpoch: p.leaderEpoch,
        replicas: [...p.replicas], isr: [...p.isr], offlineReplicas: [...p.offlineReplicas],
        logStartOffset: local ? local.log.logStartOffset : null,
        logEndOffset: local ? local.log.logEndOffset : null,
        highWatermark: local ? local.highWatermark : null,
        offsetsFrom: local ? (local.isLeader ? 'leader' : 'follower') : null,
        sizeBytes: null,
        tiered: local && rlm && local.log.tieredLog?.remoteLogEnabled ? tieredRow(rlm, { topicId: t.id, topic: t.name, partition: p.partition }, local.log.tieredLog) : null,
        underReplicated: p.isr.length < p.replicas.length,
        offline: p.leader < 0 || p.offlineReplicas.includes(p.leader),
      };
    }),
  };
}

function rolesOf(node: NodeHandle): string[] {
  const roles = node.config.processRoles;
  return roles.length === 0 ? ['broker', 'controller'] : [...roles];
}

// ---- cluster links (issue 35) --------------------------------------------------------------------

/** One mirror partition: its leader, and when this node leads it, its link fetcher's progress. */
export interface LinkPartitionRow {
  partition: number;
  leader: number;
  /** Led here: the source's high watermark as last seen (-1 before the first fetch), this log's end, the lag; else null (ask the leader's node). */
  sourceHighWatermark: number | null;
  logEndOffset: number | null;
  lag: number | null;
  lastError: string | null;
}
export interface MirrorTopicRow { topic: string; link: string; linkExists: boolean; partitions: LinkPartitionRow[] }
export interface LinkRow { name: string; bootstrapServers: string; securityProtocol: string; mirrorTopics: string[] }
export interface LinksView {
  /** Every link in the metadata (its LINK config resource; no secrets). */
  links: LinkRow[];
  /** Every mirror topic (topic config link.name) with its partitions. */
  topics: MirrorTopicRow[];
  /** The mirror partitions this node leads, as the link manager reports them. */
  partitions: { link: string; topic: string; partition: number; sourceHighWatermark: number; logEndOffset: number; lastError: string | null }[];
}

const LINK_RESOURCE = 64;
const TOPIC_RESOURCE = 2;

/** /v1/links: the links and mirror topics of the cluster (this node's metadata), with the lag of the partitions led here. */
export function linksView(node: NodeHandle): LinksView {
  const partitions = node.links?.status() ?? [];
  const md = node.metadata;
  if (md === null) return { links: [], topics: [], partitions };
  const here = new Map(partitions.map((p) => [`${p.topic}\u0000${p.partition}`, p]));
  const links = new Map<string, LinkRow>();
  for (const r of md.image.configs.resources.values()) {
    if (r.type !== LINK_RESOURCE) continue;
    links.set(r.name, { name: r.name, bootstrapServers: r.entries.get('bootstrap.servers') ?? '', securityProtocol: r.entries.get('security.protocol') ?? 'PLAINTEXT', mirrorTopics: [] });
  }
  const view = md.view();
  const topics: MirrorTopicRow[] = [];
  for (const t of view.topics()) {
    const link = view.configs(TOPIC_RESOURCE, t.name).get('link.name') ?? '';
    if (link === '') continue;
    links.get(link)?.mirrorTopics.push(t.name);
    topics.push({
      topic: t.name, link, linkExists: links.has(link),
      partitions: t.partitions.map((p) => {
        const s = here.get(`${t.name}\u0000${p.partition}`);
        return {
          partition: p.partition, leader: p.leader,
          sourceHighWatermark: s?.sourceHighWatermark ?? null, logEndOffset: s?.logEndOffset ?? null,
          lag: s === undefined ? null : s.sourceHighWatermark < 0 ? null : Math.max(0, s.sourceHighWatermark - s.logEndOffset),
          lastError: s?.lastError ?? null,
        };
      }).sort((a, b) => a.partition - b.partition),
    });
  }
  for (const l of links.values()) l.mirrorTopics.sort();
  return { links: [...links.values()].sort((a, b) => a.name.localeCompare(b.name)), topics: topics.sort((a, b) => a.topic.localeCompare(b.topic)), partitions };
}
