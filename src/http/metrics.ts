// GET /metrics: one prom-client registry per node. Names are Kafka's JMX beans as the Prometheus JMX
// exporter renders them (kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions →
// kafka_server_replicamanager_underreplicatedpartitions), so dashboards and alert rules written for
// Kafka work. Nothing is counted here: every value is read at scrape time from counters the broker
// bumps on its own paths (RequestMetrics, ReplicaManagerStats) or computed from the node's state,
// so the produce and fetch paths pay only for plain increments.
import { performance } from 'node:perf_hooks';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { ErrorCode, apiInfo, errorName } from '../protocol/index.js';
import { REQUEST_LATENCY_BUCKETS_MS } from '../network/index.js';
import type { NodeHandle as ServerHandle } from './node-handle.js';
import type { RemoteTopicStats } from '../tiered/index.js';
import { produceRequestCounts } from '../replication/index.js';
import type { GroupLag } from './group-lag.js';
import { LOG_FLUSH_BUCKETS_MS } from '../storage/index.js';

type Labels = Record<string, string | number>;
interface Sample { value: number; labels: Labels; metricName?: string }

/** A metric whose samples are computed when scraped (prom-client's registry renders it). */
function collected(registry: Registry, name: string, help: string, type: 'gauge' | 'counter' | 'histogram', samples: () => Sample[]): void {
  const metric = { name, help, type, aggregator: 'sum', get: () => ({ name, help, type, aggregator: 'sum', values: samples() }) };
  registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
}

/** Prometheus histogram samples from non-cumulative bucket counts (one more than `bounds`: +Inf). */
function histogramSamples(name: string, labels: Labels, bounds: readonly number[], buckets: Float64Array, count: number, sum: number): Sample[] {
  const out: Sample[] = [];
  let cumulative = 0;
  bounds.forEach((le, i) => {
    cumulative += buckets[i]!;
    out.push({ value: cumulative, labels: { ...labels, le }, metricName: `${name}_bucket` });
  });
  out.push({ value: count, labels: { ...labels, le: '+Inf' }, metricName: `${name}_bucket` });
  out.push({ value: sum, labels, metricName: `${name}_sum` });
  out.push({ value: count, labels, metricName: `${name}_count` });
  return out;
}

const gauge = (registry: Registry, name: string, help: string, value: () => number): void =>
  collected(registry, name, help, 'gauge', () => [{ value: value(), labels: {} }]);

/**
 * Node's own metrics (event-loop delay, heap, RSS, GC pauses, open file descriptors, ...) belong to
 * the process, however many nodes it runs (startCluster): collected once, shown by every node.
 */
let runtime: Registry | null = null;

function runtimeMetrics(): Registry {
  if (runtime === null) {
    runtime = new Registry();
    collectDefaultMetrics({ register: runtime });
    // Not among prom-client's defaults. Cumulative, so utilization over any window is
    // rate(active) / (rate(active) + rate(idle)), whoever else scrapes meanwhile.
    const elu = (pick: 'active' | 'idle') => () => [{ value: performance.eventLoopUtilization()[pick] / 1000, labels: {} }];
    collected(runtime, 'nodejs_eventloop_active_seconds_total', 'Time the event loop spent running callbacks (not waiting for I/O).', 'counter', elu('active'));
    collected(runtime, 'nodejs_eventloop_idle_seconds_total', 'Time the event loop spent waiting for I/O.', 'counter', elu('idle'));
  }
  return runtime;
}

export function nodeMetrics(node: ServerHandle, groupsLag?: () => Promise<GroupLag[]>): Registry {
  const registry = new Registry();
  if (groupsLag !== undefined) consumerGroupMetrics(registry, groupsLag);
  replicaManagerMetrics(registry, node);
  controllerMetrics(registry, node);
  topicMetrics(registry, node);
  remoteLogMetrics(registry, node);
  requestMetrics(registry, node);
  socketServerMetrics(registry, node);
  metadataMetrics(registry, node);
  quotaMetrics(registry, node);
  logFlushMetrics(registry, node);
  logDirMetrics(registry, node);
  groupCoordinatorMetrics(registry, node);
  shareGroupMetrics(registry, node);
  return Registry.merge([runtimeMetrics(), registry]);
}

interface PartitionCounts { partitions: number; leaders: number; underReplicated: number; underMinIsr: number; atMinIsr: number }

function partitionCounts(node: ServerHandle): PartitionCounts {
  const c = { partitions: 0, leaders: 0, underReplicated: 0, underMinIsr: 0, atMinIsr: 0 };
  const rm = node.broker?.replicaManager;
  if (rm === undefined) return c;
  for (const p of rm.allPartitions()) {
    c.partitions++;
    if (!p.isLeader) continue;
    c.leaders++;
    // Kafka's Partition.isUnderReplicated / isUnderMinIsr / isAtMinIsr: counted by the leader only.
    if (p.isr.length < p.replicas.length) c.underReplicated++;
    if (p.isr.length < p.minInsyncReplicas) c.underMinIsr++;
    else if (p.isr.length === p.minInsyncReplicas) c.atMinIsr++;
  }
  return c;
}

function replicaManagerMetrics(registry: Registry, node: ServerHandle): void {
  const rm = node.broker?.replicaManager;
  if (rm === undefined) return;
  const g = (name: string, help: string, pick: (c: PartitionCounts) => number) => gauge(registry, `kafka_server_replicamanager_${name}`, help, () => pick(partitionCounts(node)));
  g('partitioncount', 'Partitions with a replica on this broker.', (c) => c.partitions);
  g('leadercount', 'Partitions this broker leads.', (c) => c.leaders);
  g('underreplicatedpartitions', 'Partitions led here whose ISR is smaller than their replica set.', (c) => c.underReplicated);
  g('underminisrpartitioncount', 'Partitions led here whose ISR is below min.insync.replicas (acks=all produces fail).', (c) => c.underMinIsr);
  g('atminisrpartitioncount', 'Partitions led here whose ISR is exactly min.insync.replicas.', (c) => c.atMinIsr);
  collected(registry, 'kafka_server_replicamanager_isrshrinks_total', 'Committed ISR shrinks of partitions led here.', 'counter', () => [{ value: rm.stats.isrShrinks, labels: {} }]);
  collected(registry, 'kafka_server_replicamanager_isrexpands_total', 'Committed ISR expansions of partitions led here.', 'counter', () => [{ value: rm.stats.isrExpands, labels: {} }]);
  // Not a Kafka bean: what the broker sees of its producers' settings, for `logline doctor`.
  collected(registry, 'logline_produce_requests_total', 'Clients\' Produce requests answered here, by acks and by whether their batches carry a producer id (idempotent).', 'counter',
    () => produceRequestCounts(rm.stats).map((c) => ({ value: c.requests, labels: { acks: c.acks, idempotent: String(c.idempotent) } })));
  const purgatory = (): Sample[] => [
    { value: rm.producePurgatory.pending, labels: { delayedOperation: 'Produce' } },
    { value: rm.fetchPurgatory.pending, labels: { delayedOperation: 'Fetch' } },
  ];
  collected(registry, 'kafka_server_delayedoperationpurgatory_purgatorysize', 'Requests waiting in a purgatory.', 'gauge', purgatory);
}

/**
 * The KafkaController beans. As in Kafka, only the active controller reports the cluster's counts
 * (the others report 0), so a sum over all nodes is the cluster's number.
 */
function controllerMetrics(registry: Registry, node: ServerHandle): void {
  const cs = node.controllerService;
  const md = node.metadata;
  if (cs === null || md === null) return;
  const active = () => cs.isActive;
  const whenActive = (f: () => number) => () => (active() ? f() : 0);
  const k = (name: string) => `kafka_controller_kafkacontroller_${name}`;
  gauge(registry, k('activecontrollercount'), 'Whether this node is the active controller (1) or not (0).', () => (active() ? 1 : 0));
  gauge(registry, k('offlinepartitionscount'), 'Partitions without a leader (active controller only).', whenActive(() => {
    let n = 0;
    for (const t of md.image.topics.topicsById.values()) for (const p of t.partitions.values()) if (p.leader < 0) n++;
    return n;
  }));
  const brokers = () => [...md.image.cluster.brokers.values()];
  gauge(registry, k('fencedbrokercount'), 'Registered brokers that are fenced (active controller only).', whenActive(() => brokers().filter((b) => b.fenced).length));
  gauge(registry, k('activebrokercount'), 'Registered brokers that are not fenced (active controller only).', whenActive(() => brokers().filter((b) => !b.fenced).length));
  gauge(registry, k('globaltopiccount'), 'Topics in the cluster (active controller only).', whenActive(() => md.image.topics.topicsById.size));
  gauge(registry, k('globalpartitioncount'), 'Partitions in the cluster (active controller only).', whenActive(() => {
    let n = 0;
    for (const t of md.image.topics.topicsById.values()) n += t.partitions.size;
    return n;
  }));
}

/**
 * Kafka's BrokerTopicMetrics: one series per topic, and the broker's total without a topic label
 * (Kafka's bean without the topic tag), there from start-up at 0 so rate() alerts on it have a
 * series before the first record. Topics' counters are never dropped, so the total only grows.
 */
function topicMetrics(registry: Registry, node: ServerHandle): void {
  const stats = node.broker?.replicaManager.stats;
  if (stats === undefined) return;
  const perTopic = (pick: (c: { bytesIn: number; messagesIn: number; bytesOut: number }) => number) => (): Sample[] => {
    const out: Sample[] = [{ value: 0, labels: {} }];
    for (const [topic, c] of stats.entries()) {
      const value = pick(c);
      out[0]!.value += value;
      out.push({ value, labels: { topic } });
    }
    return out;
  };
  const b = (name: string) => `kafka_server_brokertopicmetrics_${name}`;
  collected(registry, b('bytesin_total'), 'Record bytes appended by this broker as leader, per topic and in all (no topic label).', 'counter', perTopic((c) => c.bytesIn));
  collected(registry, b('messagesin_total'), 'Records appended by this broker as leader, per topic and in all (no topic label).', 'counter', perTopic((c) => c.messagesIn));
  collected(registry, b('bytesout_total'), 'Record bytes sent to consumers by this broker (not replication), per topic and in all (no topic label).', 'counter', perTopic((c) => c.bytesOut));
}

/** Tiered storage (KIP-405, KIP-963): Kafka's BrokerTopicMetrics Remote* names, per topic. */
function remoteLogMetrics(registry: Registry, node: ServerHandle): void {
  const rlm = node.broker?.replicaManager.remoteLog;
  if (rlm === undefined || rlm === null) return;
  const b = (name: string) => `kafka_server_brokertopicmetrics_${name}`;
  const perTopic = (pick: (c: RemoteTopicStats) => number) => (): Sample[] => [...rlm.stats].map(([topic, c]) => ({ value: pick(c), labels: { topic } }));
  collected(registry, b('remotecopybytes_total'), 'Segment bytes copied to remote storage, per topic (RemoteCopyBytesPerSec).', 'counter', perTopic((c) => c.copyBytes));
  collected(registry, b('remotecopyrequests_total'), 'Segments copied to remote storage, per topic (RemoteCopyRequestsPerSec).', 'counter', perTopic((c) => c.copyRequests));
  collected(registry, b('remotecopyerrors_total'), 'Failed segment copies, per topic (RemoteCopyErrorsPerSec).', 'counter', perTopic((c) => c.copyErrors));
  collected(registry, b('remotefetchbytes_total'), 'Record bytes read from remote storage for consumers, per topic (RemoteFetchBytesPerSec).', 'counter', perTopic((c) => c.fetchBytes));
  collected(registry, b('remotefetchrequests_total'), 'Reads from remote storage, per topic (RemoteFetchRequestsPerSec).', 'counter', perTopic((c) => c.fetchRequests));
  collected(registry, b('remotefetcherrors_total'), 'Failed reads from remote storage, per topic (RemoteFetchErrorsPerSec).', 'counter', perTopic((c) => c.fetchErrors));
  collected(registry, b('remotedeleterequests_total'), 'Remote segments deleted, per topic (RemoteDeleteRequestsPerSec).', 'counter', perTopic((c) => c.deleteRequests));
  collected(registry, b('remotedeleteerrors_total'), 'Failed remote segment deletions, per topic (RemoteDeleteErrorsPerSec).', 'counter', perTopic((c) => c.deleteErrors));
  const lag = (pick: (l: { bytes: number; segments: number }) => number) => (): Sample[] => [...rlm.copyLag()].map(([topic, l]) => ({ value: pick(l), labels: { topic } }));
  collected(registry, b('remotecopylagbytes'), 'Bytes of rolled segments not yet copied, per topic led here (RemoteCopyLagBytes).', 'gauge', lag((l) => l.bytes));
  collected(registry, b('remotecopylagsegments'), 'Rolled segments not yet copied, per topic led here (RemoteCopyLagSegments).', 'gauge', lag((l) => l.segments));
  collected(registry, b('remotelogsizebytes'), 'Bytes in remote storage, per topic led here (RemoteLogSizeBytes).', 'gauge',
    () => [...rlm.remoteLogSizeByTopic()].map(([topic, value]) => ({ value, labels: { topic } })));
}

function socketServerMetrics(registry: Registry, node: ServerHandle): void {
  const s = node.stats;
  const m = (name: string) => `kafka_server_socket_server_metrics_${name}`;
  const counter = (name: string, help: string, value: () => number) => collected(registry, name, help, 'counter', () => [{ value: value(), labels: {} }]);
  gauge(registry, m('connection_count'), 'Open client connections (TLS ones once their handshake is done).', () => s.connectionsOpen);
  counter(m('connection_creation_total'), 'Connections served since start.', () => s.connectionsAccepted);
  counter(m('failed_authentication_total'), 'Failed TLS handshakes and SASL authentications.', () => s.tlsHandshakeFailures + s.saslAuthenticationFailures);
  counter('logline_network_connections_refused_total', 'Connections closed at once for a full max.connections, listener or per-address limit (or a full accept queue).', () => s.connectionsRejected);
  counter('logline_network_connections_delayed_total', 'Connections that waited out max.connection.creation.rate (broker or listener) before being served.', () => s.connectionsDelayed);
  counter('logline_network_connections_throttled_total', 'Connections closed after a wait for their address\'s connection_creation_rate quota.', () => s.connectionsThrottled);
}

/**
 * Error codes whose series exist from start-up for every API served (at 0), so that a rate() alert
 * on them sees the first one: NONE (the denominator of an error ratio) and UNKNOWN_SERVER_ERROR
 * (what a broker bug answers). Other codes appear when first answered.
 */
const ERRORS_FROM_START_UP: readonly number[] = [ErrorCode.NONE, ErrorCode.UNKNOWN_SERVER_ERROR];

/**
 * Kafka's RequestMetrics. Requests have a series at 0 from start-up for every API and version the
 * listeners serve (what ApiVersions advertises), and errors for ERRORS_FROM_START_UP per API, so
 * rate() has a series before the first request; other versions and codes appear when counted.
 */
function requestMetrics(registry: Registry, node: ServerHandle): void {
  const rm = node.requestMetrics;
  const n = (name: string) => `kafka_network_requestmetrics_${name}`;
  const served = () => new Map(node.router.supportedVersions().map((v) => [v.apiKey, v]));
  collected(registry, n('requests_total'), 'Requests answered, per API and version.', 'counter', () => {
    const out: Sample[] = [];
    const apis = served();
    for (const [apiKey, s] of rm.apis()) {
      const request = apiInfo(apiKey)?.name ?? String(apiKey);
      const v = apis.get(apiKey);
      apis.delete(apiKey);
      s.requests.forEach((value, version) => {
        if (value > 0 || (v !== undefined && version >= v.minVersion && version <= v.maxVersion)) out.push({ value, labels: { request, version } });
      });
    }
    for (const v of apis.values()) {
      const request = apiInfo(v.apiKey)?.name ?? String(v.apiKey);
      for (let version = v.minVersion; version <= v.maxVersion; version++) out.push({ value: 0, labels: { request, version } });
    }
    return out;
  });
  collected(registry, n('totaltimems'), 'Time from a request\'s dispatch to its encoded response, ms, per API and version.', 'histogram', () => {
    const name = n('totaltimems');
    const out: Sample[] = [];
    for (const [apiKey, s] of rm.apis()) {
      const request = apiInfo(apiKey)?.name ?? String(apiKey);
      s.requests.forEach((count, version) => {
        if (count > 0) out.push(...histogramSamples(name, { request, version }, REQUEST_LATENCY_BUCKETS_MS, s.latencyBuckets[version]!, count, s.latencySumMs[version]!));
      });
    }
    return out;
  });
  collected(registry, n('errors_total'), 'Error codes in responses (top level and per topic/partition; NONE included), per API.', 'counter', () => {
    const out: Sample[] = [];
    const apis = served();
    for (const [apiKey, s] of rm.apis()) {
      const request = apiInfo(apiKey)?.name ?? String(apiKey);
      const fromStartUp = apis.delete(apiKey);
      s.errors.forEach((value, i) => {
        if (value > 0 || (fromStartUp && ERRORS_FROM_START_UP.includes(i - 1))) out.push({ value, labels: { request, error: errorName(i - 1) } });
      });
    }
    for (const apiKey of apis.keys()) {
      const request = apiInfo(apiKey)?.name ?? String(apiKey);
      for (const code of ERRORS_FROM_START_UP) out.push({ value: 0, labels: { request, error: errorName(code) } });
    }
    return out;
  });
}

/**
 * Log directories, under Kafka's LogManager bean with its logDirectory tag: Kafka's
 * LogDirectoryOffline, and (not Kafka beans; Redpanda's storage_disk_* as a model) the volume's
 * size and usable bytes at the last sample, the floor and alert threshold, and
 * LogDirectoryFreeSpaceAlert: 0 ok, 1 under the alert threshold, 2 under the floor (clients'
 * produce refused), 3 offline.
 */
function logDirMetrics(registry: Registry, node: ServerHandle): void {
  const m = (name: string) => `kafka_log_logmanager_${name}`;
  const per = (name: string, help: string, pick: (d: ReturnType<ServerHandle['logDirs']>[number]) => number) =>
    collected(registry, m(name), help, 'gauge', () => node.logDirs().map((d) => ({ value: pick(d), labels: { logDirectory: d.path } })));
  per('logdirectoryoffline', 'Whether the log directory went offline after an I/O error (1) or not (0).', (d) => (d.state === 'offline' ? 1 : 0));
  per('logdirectoryfreespacealert', 'The log directory\'s free space: 0 ok, 1 below log.dir.free.bytes.alert.threshold, 2 below log.dir.min.free.bytes (clients\' produce refused), 3 offline.',
    (d) => ({ ok: 0, low: 1, full: 2, offline: 3 })[d.state]);
  per('logdirectoryusablebytes', 'Bytes still usable on the log directory\'s volume at the last sample (statfs f_bavail; -1 unknown).', (d) => d.usableBytes);
  per('logdirectorytotalbytes', 'Size of the log directory\'s volume (-1 unknown).', (d) => d.totalBytes);
  per('logdirectoryminfreebytes', 'log.dir.min.free.bytes: below it clients\' produce to the directory is refused.', (d) => d.minFreeBytes);
  per('logdirectoryfreebytesalertthreshold', 'log.dir.free.bytes.alert.threshold.', (d) => d.alertFreeBytes);
  collected(registry, m('logdirectoryproducerefused_total'), 'Partitions of clients\' produce requests refused (NOT_ENOUGH_REPLICAS) while the directory was below log.dir.min.free.bytes.', 'counter',
    () => node.logDirs().map((d) => ({ value: d.producesRefused, labels: { logDirectory: d.path } })));
}

/** Kafka's raft-metrics (the metadata log) and broker-metadata-metrics (what this node has applied). */
function metadataMetrics(registry: Registry, node: ServerHandle): void {
  const md = node.metadata;
  if (md === null) return;
  const r = (name: string) => `kafka_server_raft_metrics_${name}`;
  gauge(registry, r('log_end_offset'), 'End offset of this node\'s copy of the metadata log.', () => md.raft.core.log.endOffset);
  gauge(registry, r('high_watermark'), 'High watermark of the metadata log as this node knows it.', () => md.raft.highWatermark);
  gauge(registry, r('current_epoch'), 'Epoch of the metadata quorum as this node knows it.', () => md.raft.epoch);
  gauge(registry, r('current_leader'), 'Leader of the metadata quorum (-1: unknown).', () => md.raft.leaderId ?? -1);
  gauge(registry, 'kafka_server_broker_metadata_metrics_last_applied_record_offset', 'Offset of the last metadata record applied to this node\'s image.', () => Number(md.offset()));
  gauge(registry, 'kafka_server_broker_metadata_metrics_lag', 'Metadata records this node has not applied yet behind the high watermark.', () => Math.max(0, md.raft.highWatermark - 1 - Number(md.offset())));
}

/**
 * Consumer lag per group, topic and partition, as kafka-lag-exporter and Redpanda name it, for the
 * groups this node coordinates (so a sum over the cluster's nodes counts each group once).
 */
function consumerGroupMetrics(registry: Registry, groupsLag: () => Promise<GroupLag[]>): void {
  const family = (name: string, help: string, pick: (p: GroupLag['partitions'][number]) => number | null) => {
    const metric = {
      name, help, type: 'gauge', aggregator: 'sum',
      get: async () => {
        const values: Sample[] = [];
        for (const g of await groupsLag()) {
          for (const p of g.partitions) {
            const v = pick(p);
            if (v !== null) values.push({ value: v, labels: { group: g.groupId, topic: p.topic, partition: p.partition } });
          }
        }
        return { name, help, type: 'gauge', aggregator: 'sum', values };
      },
    };
    registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
  };
  family('kafka_consumergroup_lag', 'Log end offset minus the group\'s committed offset, per partition (groups coordinated by this node).', (p) => p.lag);
  family('kafka_consumergroup_current_offset', 'The group\'s committed offset, per partition (groups coordinated by this node).', (p) => p.committedOffset);
  family('kafka_consumergroup_log_end_offset', 'The partition\'s log end offset as consumers see it (high watermark), per group that committed to it.', (p) => p.logEndOffset);
}

/**
 * Share groups (KIP-932), after Kafka's share-group-metrics and SharePartitionMetrics beans: fetch and
 * acknowledgement requests and records, lock timeouts, archived records and dead letters as
 * counters (rates are Prometheus' rate()); per share-partition led here the records in flight and
 * acquired and the lag (records up to the high watermark not yet acknowledged or archived), so a
 * sum over the cluster's nodes counts each share-partition once.
 */
function shareGroupMetrics(registry: Registry, node: ServerHandle): void {
  const broker = node.broker;
  if (broker === null) return;
  const m = broker.share.manager;
  const s = m.stats;
  const counter = (name: string, help: string, value: () => number) => collected(registry, name, help, 'counter', () => [{ value: value(), labels: {} }]);
  counter('kafka_server_share_group_metrics_share_fetch_total', 'ShareFetch requests served (each may acquire records of several share-partitions).', () => s.fetches);
  counter('kafka_server_share_group_metrics_share_acknowledgement_total', 'Acknowledgements applied (ShareAcknowledge, or piggybacked on ShareFetch), per share-partition.', () => s.acknowledgements);
  counter('kafka_server_share_group_metrics_records_acquired_total', 'Records acquired by share consumers (each delivery counts).', () => s.recordsAcquired);
  counter('kafka_server_share_group_metrics_records_acknowledged_total', 'Records acknowledged (accepted, released or rejected) by share consumers.', () => s.recordsAcknowledged);
  counter('kafka_server_share_partition_metrics_acquisition_lock_timeout_total', 'Acquired records whose lock ran out before they were acknowledged.', () => s.lockTimeouts);
  counter('kafka_server_share_partition_metrics_records_archived_total', 'Records archived because a consumer rejected them or they reached share.delivery.count.limit.', () => s.recordsArchived);
  counter('logline_share_dead_letters_written_total', 'Records written to share groups\' dead-letter topics.', () => s.deadLettersWritten);
  counter('logline_share_dead_letters_failed_total', 'Dead letters that could not be written (missing topic, no leader, ...).', () => s.deadLetterFailures);
  const rows = () => m.partitionStats((topic, partition) => { const p = broker.replicaManager.partition(topic, partition); return p?.isLeader ? p.highWatermark : null; });
  const perPartition = (name: string, help: string, pick: (r: ReturnType<typeof rows>[number]) => number | null) =>
    collected(registry, name, help, 'gauge', () => rows().flatMap((r) => {
      const v = pick(r);
      return v === null ? [] : [{ value: v, labels: { group: r.groupId, topic: r.topic, partition: r.partition } }];
    }));
  perPartition('kafka_server_share_partition_metrics_in_flight_message_count', 'Records between the share-partition start offset and its end offset (share-partitions led here).', (r) => r.inFlight);
  perPartition('kafka_server_share_partition_metrics_acquired_records', 'Records acquired by a consumer and not yet acknowledged (share-partitions led here).', (r) => r.acquired);
  perPartition('kafka_sharegroup_start_offset', 'The share-partition start offset (share-partitions led here).', (r) => r.startOffset);
  perPartition('kafka_sharegroup_lag', 'Records up to the high watermark not yet acknowledged or archived, per share-partition led here.', (r) => r.lag);
}

/** Kafka's quota beans (kafka.server:type=Produce|Fetch|Request|ControllerMutation): rates per user/client-id, throttles per type. */
function quotaMetrics(registry: Registry, node: ServerHandle): void {
  const brokerQuotas = node.broker?.clientQuotas;
  const types = [['producer_byte_rate', 'produce', 'byte_rate'], ['consumer_byte_rate', 'fetch', 'byte_rate'],
    ['request_percentage', 'request', 'request_time'], ['controller_mutation_rate', 'controllermutation', 'mutation_rate']] as const;
  for (const [key, type, rate] of types) {
    // controller_mutation_rate is charged by the active controller (controller-apis.ts), not by the broker a client asked.
    const quotas = key === 'controller_mutation_rate' ? node.controllerMutationQuotas ?? brokerQuotas : brokerQuotas;
    if (!quotas) continue;
    collected(registry, `kafka_server_${type}_${rate}`, `Measured ${key} per user and client id (as its quota level shares it).`, 'gauge',
      () => quotas.rates().filter((r) => r.key === key).map((r) => ({ value: r.rate, labels: { user: r.user, client_id: r.clientId } })));
    collected(registry, `kafka_server_${type}_throttle_time_ms_total`, `Milliseconds of throttle handed out for ${key}.`, 'counter',
      () => [{ value: quotas.stats.get(key)!.throttleTimeMsTotal, labels: {} }]);
    collected(registry, `kafka_server_${type}_throttled_responses_total`, `Responses throttled for ${key}.`, 'counter',
      () => [{ value: quotas.stats.get(key)!.throttledResponses, labels: {} }]);
  }
}

/** Kafka's LogFlushStats: fsync times of this node's logs (partition logs and the metadata log). */
function logFlushMetrics(registry: Registry, node: ServerHandle): void {
  const f = node.logFlushStats;
  if (f === null) return;
  const name = 'kafka_log_logflushstats_logflushrateandtimems';
  collected(registry, name, 'Time of each log flush (fsync), ms.', 'histogram', () => histogramSamples(name, {}, LOG_FLUSH_BUCKETS_MS, f.buckets, f.count, f.sumMs));
  // Not Kafka beans: flush.messages' grouped fsync rounds (one per log directory at a time), and the logs fsynced in them.
  collected(registry, 'logline_log_flush_rounds_total', 'Grouped fsync rounds run for flush.messages appends.', 'counter', () => [{ value: f.groupRounds, labels: {} }]);
  collected(registry, 'logline_log_flush_round_logs_total', 'Partition logs fsynced in grouped flush.messages rounds.', 'counter', () => [{ value: f.groupLogs, labels: {} }]);
}

/** Every state a group of each protocol can be listed in, so each series exists from the start (at 0). */
const GROUP_STATES: Record<string, readonly string[]> = {
  classic: ['Empty', 'PreparingRebalance', 'CompletingRebalance', 'Stable'],
  consumer: ['Empty', 'Assigning', 'Reconciling', 'Stable'],
};

/**
 * The group coordinator's groups by protocol and state (Kafka's GroupMetadataManager NumGroups* and
 * group-coordinator-metrics' group counts) for the `__consumer_offsets` partitions led here, and the
 * rebalances it has run: summed over nodes, the cluster's.
 */
function groupCoordinatorMetrics(registry: Registry, node: ServerHandle): void {
  const groups = node.broker?.groups;
  if (groups === undefined) return;
  collected(registry, 'kafka_coordinator_group_groupmetadatamanager_numgroups', 'Groups coordinated here, by protocol (classic, consumer) and state.', 'gauge', () => {
    const counts = new Map<string, number>();
    for (const g of groups.list([], []).groups) counts.set(`${g.groupType}/${g.groupState}`, (counts.get(`${g.groupType}/${g.groupState}`) ?? 0) + 1);
    const out: Sample[] = [];
    for (const [protocol, states] of Object.entries(GROUP_STATES)) {
      for (const state of states) out.push({ value: counts.get(`${protocol}/${state}`) ?? 0, labels: { protocol, state } });
    }
    return out;
  });
  collected(registry, 'kafka_server_group_coordinator_metrics_group_rebalance_total', 'Rebalances run here: a classic group\'s join phase completing, a consumer group\'s epoch bump.', 'counter', () => [
    { value: groups.stats.classicRebalances, labels: { protocol: 'classic' } },
    { value: groups.stats.consumerRebalances, labels: { protocol: 'consumer' } },
  ]);
}

export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** Whether a scrape's Accept header asks for OpenMetrics (Prometheus lists it first when it can parse it). */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  return accept !== undefined && accept.split(',').some((part) => {
    const [type, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    return type === 'application/openmetrics-text' && !params.some((p) => /^q=0(\.0*)?$/.test(p));
  });
}

/**
 * The Prometheus text a registry renders, as OpenMetrics 1.0: a counter's family is named without
 * `_total` (its samples keep it), `untyped` is `unknown`, no blank lines, `# EOF` last. Converted
 * here rather than by prom-client's OpenMetrics registry, which renames counters by mutating the
 * metric objects that the Prometheus-format scrape shares.
 */
export function toOpenMetrics(text: string): string {
  const lines = text.split('\n').filter((l) => l !== '');
  const counters = new Set<string>();
  for (const l of lines) {
    const m = /^# TYPE (\S+) counter$/.exec(l);
    if (m !== null) counters.add(m[1]!);
  }
  const family = (name: string) => (counters.has(name) ? name.replace(/_total$/, '') : name);
  const out: string[] = [];
  let counter: string | null = null;
  for (const line of lines) {
    const meta = /^# (HELP|TYPE) (\S+)(.*)$/.exec(line);
    if (meta !== null) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (kind === 'TYPE') counter = counters.has(name) ? family(name) : null;
      out.push(`# ${kind} ${family(name)}${kind === 'TYPE' && rest === ' untyped' ? ' unknown' : rest}`);
    } else if (counter !== null && (line.startsWith(`${counter} `) || line.startsWith(`${counter}{`))) {
      out.push(`${counter}_total${line.slice(counter.length)}`);
    } else {
      out.push(line);
    }
  }
  out.push('# EOF');
  return out.join('\n') + '\n';
}
