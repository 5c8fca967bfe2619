// The cluster metadata as a Raft log: `__cluster_metadata-0` is the log of the Raft room's driver
// (StorageLogStore on the storage engine, quorum-state next to it), and this node is a voter of
// `controller.quorum.voters` — a quorum of one for `logline server`, on the same code a cluster
// uses. `commit(records)` proposes the records as one batch; they reach the MetadataImage the
// broker reads only through the state machine below, once committed (for a quorum of one: once
// fsynced). At start the latest snapshot is loaded and the log after it replayed.
//
// Snapshots are Kafka's (`<endOffset>-<epoch>.checkpoint`, SnapshotHeader, the image as metadata
// records, SnapshotFooter), taken after metadata.log.max.record.bytes.between.snapshots bytes of
// records; the log below a snapshot is deleted.
//
// In a cluster (`controller.quorum.voters` naming other nodes) the driver speaks Kafka's Raft RPCs
// over a SocketTransport on this node's controller listener; a node outside the voter set is an
// observer (it only fetches). Every node replays what is committed into its own image; only the
// Raft leader writes (the ControllerService on it, once its epoch start is applied).
//
// A directory written before the metadata log was a Raft log (batches at partition leader epoch 0,
// no quorum-state file) opens as it is: its batches are Raft entries of epoch 0, which the first
// election (epoch 1) commits as the prefix of the log.
import type { ConnectionOptions, TlsOptions } from 'node:tls';
import type { Socket } from 'node:net';
import * as nodePath from 'node:path';
import {
  MetadataDelta, MetadataImage, MetadataLoader, MetadataRecordType, bootstrapFeatureLevels, deserializeMetadataRecord, imageToRecords, metadataRecord,
  metadataRecordName, provenance, serializeMetadataRecord, type MetadataBatch, type MetadataRecord,
} from '../metadata/index.js';
import { buildRecordBatchSync, iterateBatches, iterateRecords } from '../records/index.js';
import type { FileSystem, LogFlushStats } from '../storage/index.js';
import {
  FileQuorumStateStore, RaftDriver, type PeerLogin, type InboundGate, SocketTransport, StorageLogStore, defaultRaftTimeouts, METADATA_LOG_DIR_NAME,
  type OtherRequests, type VoterAddress, type Committed, type Entry, type EntryBatch, type QuorumDescription, type RaftConfig, type RaftTransport, type ReplicatedStateMachine, type Snapshot,
} from '../raft/index.js';
import type { Clock, Logger } from '../util/index.js';
import { isInternalTopic, METADATA_TOPIC_NAME, type EmittedRecord } from '../controller/index.js';
import type { MetadataSource } from './broker.js';
import { NotControllerError, type MetadataView, type PartitionView, type TopicView } from '../broker/index.js';

export const METADATA_TOPIC = METADATA_TOPIC_NAME;
/** Records per record batch in a snapshot. */
const SNAPSHOT_BATCH_RECORDS = 1000;
/** How long a start waits for the quorum to elect a leader and replay the log. */
const OPEN_TIMEOUT_MS = 60_000;

export interface LogMetadataOptions {
  /** The controller listener speaks TLS: serving it (a controller) and reaching the voters. */
  readonly controllerTls?: { readonly server?: TlsOptions; readonly client: ConnectionOptions };
  /** The controller listener speaks SASL: how this node logs in to the other voters. */
  readonly controllerSasl?: { readonly login: () => PeerLogin };
  /** What each connection to this controller's listener goes through: its principal, SASL, authorization (controller-listener.ts). */
  readonly controllerGate?: (socket: Socket) => InboundGate | { refused: string };
  /** The log directory; the metadata log is `<logDir>/__cluster_metadata-0`. */
  readonly logDir: string;
  readonly fs: FileSystem;
  readonly clock: Clock;
  readonly clusterId: string;
  readonly nodeId: number;
  /** controller.quorum.voters as ids (a quorum of this node alone needs no addresses and no listener). */
  readonly voters?: readonly number[];
  /** controller.quorum.voters with addresses: a quorum over the network. */
  readonly voterAddresses?: readonly VoterAddress[];
  /** This node's controller listener (port 0: any; an observer may leave it out and listens on an ephemeral loopback port). */
  readonly controllerListener?: { readonly host: string; readonly port: number };
  /** metadata.log.max.record.bytes.between.snapshots (Kafka's default 20 MiB). */
  readonly snapshotRecordBytes?: number;
  /** metadata.log.segment.bytes. */
  readonly segmentBytes?: number;
  /** controller.quorum.* timeouts over Kafka's defaults (a quorum of one waits for none of them). */
  readonly raftTimeouts?: Partial<Pick<RaftConfig, 'electionTimeoutMs' | 'fetchTimeoutMs' | 'electionBackoffMaxMs' | 'requestTimeoutMs' | 'retryBackoffMs'>>;
  readonly logger?: Logger;
  /** Where the metadata log's fsync times are counted (the node's LogManager's). */
  readonly flushStats?: LogFlushStats;
  /**
   * Records a new cluster's log starts with after its feature levels (`logline server --add-scram`,
   * as `kafka-storage format --add-scram` writes them); ignored, with a log line, when the log exists.
   */
  readonly bootstrapRecords?: readonly MetadataRecord[];
}

/** No peers: a quorum of one never sends a message. */
class NoPeersTransport implements RaftTransport {
  readonly port = 0;
  async start(): Promise<void> {}
  send(): void {}
  async close(): Promise<void> {}
}

export class LogMetadata implements MetadataSource {
  private readonly loader = new MetadataLoader();
  private readonly listeners: (() => void)[] = [];
  private deltaListeners = 0;
  private committing: Promise<void> = Promise.resolve();
  private cached: { image: MetadataImage; leaderId: number | undefined; view: MetadataView } | null = null;
  private driver: RaftDriver | undefined;
  private transport: (RaftTransport & { readonly port: number }) | undefined;
  /** Record bytes applied since the last snapshot (Kafka counts the same for its snapshot trigger). */
  private bytesSinceSnapshot = 0;
  private snapshotScheduled = false;
  private readonly snapshotRecordBytes: number;
  private opened = false;

  private constructor(private readonly o: LogMetadataOptions) {
    this.snapshotRecordBytes = o.snapshotRecordBytes ?? 20_971_520;
  }

  get clusterId(): string { return this.o.clusterId; }

  /**
   * Starts the node's Raft replica on the metadata log and waits until a leader is known and this
   * node has replayed the log up to the high watermark it learnt (a quorum of one: until it leads).
   */
  static async open(o: LogMetadataOptions): Promise<LogMetadata> {
    const voters = o.voterAddresses?.map((v) => v.nodeId) ?? o.voters ?? [o.nodeId];
    const alone = voters.length === 1 && voters[0] === o.nodeId;
    if (!alone && o.voterAddresses === undefined) {
      throw new Error(`controller.quorum.voters: a quorum of ${voters.join(',')} needs the voters' addresses`);
    }
    const self = o.voterAddresses?.find((v) => v.nodeId === o.nodeId);
    const listenOn = o.controllerListener ?? self ?? { host: '127.0.0.1', port: 0 };
    const timeouts = { ...defaultRaftTimeouts, ...o.raftTimeouts };
    const transport: RaftTransport & { readonly port: number } = alone && o.controllerListener === undefined ? new NoPeersTransport() : new SocketTransport({
      nodeId: o.nodeId, clusterId: o.clusterId, host: listenOn.host, port: listenOn.port, voters: o.voterAddresses ?? [],
      requestTimeoutMs: timeouts.requestTimeoutMs,
      onProtocolError: (reason) => o.logger?.warn(`dropped a connection: ${reason}`),
      ...(o.controllerTls ? { tls: o.controllerTls } : {}),
      ...(o.controllerSasl ? { login: o.controllerSasl.login } : {}),
      ...(o.controllerGate ? { gate: o.controllerGate } : {}),
    });
    const m = new LogMetadata(o);
    m.transport = transport;
    const dir = nodePath.join(o.logDir, METADATA_LOG_DIR_NAME);
    const logStore = new StorageLogStore(dir, {
      fs: o.fs, clock: o.clock, snapshotFormat: 'records', ...(o.flushStats ? { flushStats: o.flushStats } : {}), ...(o.segmentBytes !== undefined ? { config: { segmentBytes: o.segmentBytes } } : {}),
    });
    let fatal: Error | undefined;
    let driver: RaftDriver;
    try {
      driver = await RaftDriver.start({
        config: {
          ...timeouts, nodeId: o.nodeId, voters, random: Math.random,
          ...(o.voterAddresses ? { voterEndpoints: o.voterAddresses.map((v) => ({ id: v.nodeId, host: v.host, port: v.port })) } : {}),
        },
        quorumStore: new FileQuorumStateStore(dir, o.fs),
        logStore,
        stateMachine: m.stateMachine(),
        transport,
        onFatal: (e) => {
          o.logger?.error(e.message);
          if (!m.opened) { fatal ??= e; return; }
          // Every request is answered from the metadata: a broken log stops the process, as Kafka does.
          setImmediate(() => { throw e; });
        },
      });
    } catch (e) {
      // A log that cannot be read (a record that is not a batch, say) fails the start.
      logStore.close();
      throw e;
    }
    m.driver = driver;
    try {
      await m.catchUp(() => fatal);
      // A new cluster's metadata begins with its feature levels (Kafka's bootstrap metadata); a
      // cluster whose log predates them keeps none (transaction.version 0), as an upgraded Kafka does.
      // A node that does not lead leaves them to the ControllerService that first becomes active.
      const fresh = m.loader.image.isEmpty;
      if (fresh && m.isActiveController()) {
        await m.commit([...bootstrapFeatureLevels().map((data) => ({ type: MetadataRecordType.FeatureLevelRecord, version: 0, data: { ...data } })),
          ...(o.bootstrapRecords ?? []) as unknown as EmittedRecord[]]);
      } else if (!fresh && (o.bootstrapRecords?.length ?? 0) > 0) {
        o.logger?.info(`metadata: ${o.bootstrapRecords!.length} bootstrap record(s) (--add-scram) ignored: the metadata log already exists`);
      }
    } catch (e) {
      await driver.close();
      // A driver stopped by a fatal error leaves its store open.
      logStore.close();
      throw e;
    }
    m.opened = true;
    return m;
  }

  /**
   * A quorum of one: until this node leads and has applied its whole log (its LeaderChange entry
   * commits everything before it). A cluster: until a leader is known and this node applied up to
   * the high watermark it learnt from it (or, leading, may write).
   */
  private async catchUp(fatal: () => Error | undefined): Promise<void> {
    const driver = this.driver!;
    const deadline = Date.now() + OPEN_TIMEOUT_MS;
    const alone = driver.core.voterSet.length === 1 && driver.core.isVoter;
    const caughtUp = (): boolean => alone
      ? driver.role === 'leader' && driver.appliedOffset >= driver.core.log.endOffset
      : this.isActiveController() || (driver.role !== 'leader' && driver.leaderId !== undefined && driver.highWatermark > 0 && driver.appliedOffset >= driver.highWatermark);
    while (!caughtUp()) {
      const e = fatal();
      if (e !== undefined) throw e;
      if (Date.now() > deadline) throw new Error(`metadata log: no leader after ${OPEN_TIMEOUT_MS} ms (role ${driver.role}, epoch ${driver.epoch})`);
      await new Promise((r) => setTimeout(r, 1));
    }
  }

  get image(): MetadataImage { return this.loader.image; }

  /**
   * This node may write: it is the Raft leader, its epoch start is committed (so every entry of
   * earlier leaders is too) and applied, so the image changes are checked against is the latest.
   */
  isActiveController(): boolean {
    const d = this.driver;
    return d !== undefined && d.role === 'leader' && d.highWatermark > d.core.epochStart && d.appliedOffset >= d.highWatermark;
  }

  /** The Raft leader's node id, when known: the active controller (or the one about to be). */
  get leaderId(): number | undefined { return this.driver?.leaderId; }

  /** Where this node's controller listener is bound (0 for a quorum of one, which has none). */
  get controllerPort(): number { return this.transport?.port ?? 0; }

  /** Where voter `nodeId` listens for controller requests (its CONTROLLER endpoint in the voter set), if known. */
  controllerEndpoint(nodeId: number): { host: string; port: number } | undefined {
    const v = this.driver?.core.voterSet.find((x) => x.id === nodeId);
    return v?.host === undefined || v.port === undefined ? undefined : { host: v.host, port: v.port };
  }

  /** The controller's APIs on this node's controller listener, beside the quorum's own (no-op for a quorum of one: it has no listener). */
  serveControllerApis(handler: OtherRequests): void {
    if (this.transport instanceof SocketTransport) this.transport.serveOtherRequests(handler);
  }

  /** The quorum as DescribeQuorum reports it. */
  describeQuorum(): QuorumDescription { return this.driver!.describeQuorum(); }

  /** The metadata log underneath, for tests and tools. */
  get raft(): RaftDriver { return this.driver!; }

  /** Whether this node leads the quorum with a majority that fetched from it a moment ago (RaftCore.hasFreshQuorumContact). */
  hasFreshQuorumContact(): boolean { return this.driver?.hasFreshQuorumContact() ?? false; }

  /** Stops the Raft driver (pending commits fail) and closes the log after its last fsync. */
  async close(): Promise<void> {
    await this.driver?.close();
  }

  view(): MetadataView {
    const image = this.loader.image;
    const leaderId = this.driver?.leaderId;
    if (this.cached?.image !== image || this.cached.leaderId !== leaderId) this.cached = { image, leaderId, view: this.viewOf(image) };
    return this.cached.view;
  }

  private viewOf(image: MetadataImage): MetadataView {
    // Brokers come from their registrations: the unfenced ones, on the listener asked about ('' for
    // any: the first listener each registered).
    const live = image.cluster.liveBrokers();
    const liveIds = new Set(live.map((b) => b.id));
    // As Kafka's metadata cache: a replica on a broker that is not registered or is fenced is offline.
    const offline = (replicas: readonly number[]): number[] => (replicas.every((r) => liveIds.has(r)) ? [] : replicas.filter((r) => !liveIds.has(r)));
    const toView = (t: { name: string; id: string; partitions: ReadonlyMap<number, { leader: number; leaderEpoch: number; replicas: readonly number[]; isr: readonly number[]; elr: readonly number[]; lastKnownElr: readonly number[] }> }): TopicView => ({
      name: t.name, id: t.id, isInternal: isInternalTopic(t.name),
      partitions: [...t.partitions].sort(([a], [b]) => a - b).map(([partition, p]): PartitionView => ({
        partition, leader: p.leader, leaderEpoch: p.leaderEpoch, replicas: [...p.replicas], isr: [...p.isr], offlineReplicas: offline(p.replicas),
        elr: [...p.elr], lastKnownElr: [...p.lastKnownElr],
      })),
    });
    const topics = [...image.topics.topicsById.values()].map(toView);
    const byName = new Map(topics.map((t) => [t.name, t]));
    const byId = new Map(topics.map((t) => [t.id, t]));
    // What clients are told is the controller (Metadata, DescribeCluster's broker endpoints): in
    // KRaft a client cannot reach a controller, so Kafka names a live broker there. The active
    // controller when it is one (a combined node), else the live broker with the smallest id: a
    // stable answer, where Kafka draws a random one per request (kafkajs sends its admin requests
    // to this id, and a controller-only id is not among the brokers it knows).
    const leaderId = this.driver?.leaderId ?? -1;
    const controllerId = liveIds.has(leaderId) ? leaderId : (live.map((b) => b.id).sort((a, b) => a - b)[0] ?? -1);
    return {
      clusterId: this.clusterId, controllerId,
      brokers: (listenerName) => live.flatMap((b) => {
        const e = listenerName === '' ? b.endpoints[0] : b.endpoints.find((x) => x.name === listenerName);
        return e === undefined ? [] : [{ nodeId: b.id, host: e.host, port: e.port, rack: b.rack }];
      }),
      topics: () => topics,
      topic: (name) => byName.get(name),
      topicById: (id) => byId.get(id),
      configs: (type, name) => new Map(image.configs.configs(type, name)),
      features: () => ({
        epoch: image.features.isEmpty ? -1n : BigInt(image.provenance.lastContainedOffset), levels: image.features.finalizedVersions,
      }),
    };
  }

  /**
   * Proposes the records as one batch and resolves once they are committed and applied. The
   * records are replayed into a throwaway delta first: a record the image would refuse must never
   * reach the log, or every later start would fail on it. Commits run one at a time, so that
   * check sees every earlier commit.
   */
  commit(records: EmittedRecord[]): Promise<void> {
    const run = this.committing.then(() => this.commitNow(records));
    this.committing = run.catch(() => {});
    return run;
  }

  private async commitNow(emitted: EmittedRecord[]): Promise<void> {
    if (emitted.length === 0) return;
    if (!this.isActiveController()) throw new NotControllerError(`not the active controller (leader: ${this.driver?.leaderId ?? 'unknown'})`);
    const records = emitted.map((r) => metadataRecord(metadataRecordName(r.type), r.data as never, r.version) as MetadataRecord);
    const trial = new MetadataDelta(this.loader.image);
    for (const r of records) trial.replay(r);
    trial.apply(provenance(Math.max(0, this.loader.image.provenance.lastContainedOffset + records.length), 0, -1));
    await this.driver!.propose(records.map((r) => serializeMetadataRecord(r)));
  }

  /**
   * For the controller driver: appends records the active controller has already replayed (so no
   * trial replay here) as one batch; resolves once committed and applied, with the offsets they got.
   */
  propose(records: readonly MetadataRecord[]): Promise<Committed> {
    return this.driver!.propose(records.map((r) => serializeMetadataRecord(r)));
  }

  /** This node's place in the quorum, for the controller driver (it leads once its log up to its LeaderChange entry is applied). */
  leadership(): { isLeader: boolean; epoch: number; leaderId: number | undefined; logEndOffset: number; appliedOffset: number } {
    const d = this.driver!;
    return { isLeader: d.role === 'leader', epoch: d.epoch, leaderId: d.leaderId, logEndOffset: d.core.log.endOffset, appliedOffset: d.appliedOffset };
  }

  onChange(listener: () => void): void { this.listeners.push(listener); }

  /**
   * Each delta the loader publishes, with the image it gives: a publisher on the loader. The first
   * call carries the whole current image as a delta from the empty one (installPublisher does
   * that), so a listener added after start misses nothing. It runs before view() shows the image.
   */
  onDelta(listener: (delta: MetadataDelta, image: MetadataImage) => void): void {
    this.loader.installPublisher({ name: `delta-listener-${++this.deltaListeners}`, onMetadataUpdate: (delta, image) => listener(delta, image) });
  }

  offset(): bigint { return BigInt(this.loader.image.provenance.lastContainedOffset); }

  nextProducerId(): bigint { return this.loader.image.producerIds.nextProducerId; }

  // ---- The replicated state machine: committed records in, the image out -------------------------

  private stateMachine(): ReplicatedStateMachine {
    return {
      apply: (entries: readonly Entry[]) => this.applyBatches(entries.map((e) => ({ baseOffset: e.offset, epoch: e.epoch, values: [e.value] }))),
      applyBatches: (batches: readonly EntryBatch[]) => this.applyBatches(batches.map((b) => ({
        baseOffset: b.baseOffset, epoch: b.epoch,
        values: Array.from({ length: b.count }, (_, i) => b.bytes.subarray(b.bounds[2 * i]!, b.bounds[2 * i + 1]!)),
      }))),
      appliedThrough: (offset: number, epoch: number) => {
        this.loader.handleControl(offset, epoch);
        for (const l of this.listeners) l();
      },
      snapshot: () => this.snapshotBytes(),
      restore: (s: Snapshot) => this.restore(s),
    };
  }

  private applyBatches(batches: readonly { baseOffset: number; epoch: number; values: readonly Uint8Array[] }[]): void {
    const out: MetadataBatch[] = [];
    for (const b of batches) {
      const records: MetadataRecord[] = [];
      for (const v of b.values) {
        records.push(deserializeMetadataRecord(Buffer.from(v.buffer, v.byteOffset, v.byteLength)));
        this.bytesSinceSnapshot += v.byteLength;
      }
      if (records.length > 0) out.push({ baseOffset: b.baseOffset, epoch: b.epoch, records });
    }
    this.loader.handleCommit(out);
    for (const l of this.listeners) l();
    this.maybeScheduleSnapshot();
  }

  private maybeScheduleSnapshot(): void {
    if (this.bytesSinceSnapshot < this.snapshotRecordBytes || this.snapshotScheduled || this.driver === undefined) return;
    this.snapshotScheduled = true;
    // Outside the driver's turn: the snapshot covers everything applied when it runs.
    setImmediate(() => {
      this.snapshotScheduled = false;
      this.driver!.requestSnapshot();
    });
  }

  /** The image as metadata records in record batches (the snapshot file wraps them in Kafka's header and footer). */
  private snapshotBytes(): Uint8Array {
    this.bytesSinceSnapshot = 0;
    const records = imageToRecords(this.loader.image);
    const parts: Buffer[] = [];
    for (let i = 0; i < records.length; i += SNAPSHOT_BATCH_RECORDS) {
      parts.push(buildRecordBatchSync({
        records: records.slice(i, i + SNAPSHOT_BATCH_RECORDS).map((r) => ({ key: null, value: serializeMetadataRecord(r) })),
        baseTimestamp: -1,
      }));
    }
    return new Uint8Array(Buffer.concat(parts));
  }

  private restore(s: Snapshot): void {
    const records: MetadataRecord[] = [];
    const bytes = Buffer.from(s.data.buffer, s.data.byteOffset, s.data.byteLength);
    for (const v of iterateBatches(bytes)) {
      for (const r of iterateRecords(v, v.bytes().subarray(61))) {
        if (r.value === null) throw new Error(`metadata snapshot ${s.id.endOffset}-${s.id.epoch}: a record without a value`);
        records.push(deserializeMetadataRecord(r.value));
      }
    }
    this.loader.handleSnapshot(records, provenance(s.id.endOffset - 1, s.id.epoch, -1));
    this.bytesSinceSnapshot = 0;
    for (const l of this.listeners) l();
  }
}
