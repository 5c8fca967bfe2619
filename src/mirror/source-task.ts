// The source task of one flow (MirrorSourceConnector and its task in one): finds the topics to
// mirror, creates their remote topics on the target (partitions, configs), and copies records
// partition to partition keeping key, value, headers and timestamp, in per-partition order.
//
// Where it is in each source partition (Connect's source offsets) lives on the target in the
// compacted topic `mm2-offsets.<source>.internal`, in Connect's JSON format, where MirrorMaker 2's
// dedicated mode keeps it. At least once (default): records are acknowledged by the target first,
// then the offsets are written, so a crash in between mirrors some records again. Exactly once
// (`exactly.once.support=enabled`): one transaction on the target holds a poll's records and the
// offsets that follow them, so after a crash the records are there exactly when the offsets are.
//
// Offset syncs (upstream offset → downstream offset) go to `mm2-offset-syncs.<target>.internal`
// on the cluster `offset-syncs.topic.location` names, after the records they describe are
// acknowledged (or committed): immediately when OffsetSyncDecider says so, else on the next flush.
import { Cluster, KafkaError, Producer, fetchCommitted, type FetchedPartition, type FetchedRecord, type FetchedRun } from '../client/index.js';
import { ErrorCode } from '../protocol/index.js';
import { RECORD_BATCH_HEADER_BYTES, type RecordInput } from '../records/index.js';
import { limits, partitionKey, type Logger } from '../util/index.js';
import { AclOperation, AclPermissionType } from '../security/index.js';
import { createTopicAcls, earliestOffsets, ensurePartitions, ensureTopic, listTopics, literalTopicAcls, readToEnd, setTopicConfigs, topicOverrides, type TopicAcl } from './admin.js';
import { matches, type FlowSettings } from './config.js';
import { decodeSourceOffset, encodeOffsetSync, encodeSourceOffset, type OffsetSync } from './formats.js';
import { OffsetSyncDecider } from './offset-syncs.js';
import { isCycle, isHeartbeatsTopic, isInternalTopic } from './policy.js';
import { messageOf, pause, runTaskLoop, type TaskContext } from './task.js';

/** Connect's offsets topic of a flow's source cluster, on the target (MirrorMaker 2's dedicated mode names it so). */
export function sourceOffsetsTopic(sourceAlias: string): string {
  return `mm2-offsets.${sourceAlias}.internal`;
}

/** Whether a flow mirrors `topic` (MirrorSourceConnector.shouldReplicateTopic). */
export function shouldReplicateTopic(flow: FlowSettings, topic: string): boolean {
  return (matches(flow.topics, topic) || isHeartbeatsTopic(flow.policy, topic))
    && !isInternalTopic(flow.policy, topic) && !isCycle(flow.policy, flow.target, topic);
}

/**
 * The target's ACLs for a source's literal topic ACLs (MirrorSourceConnector.syncTopicAcls): only
 * topics the flow mirrors, renamed by the policy; ALLOW WRITE is not copied and ALLOW ALL becomes
 * ALLOW READ, so nobody but the mirror writes to a remote topic; DENY entries are copied as they are.
 */
export function targetTopicAcls(flow: FlowSettings, sourceAcls: readonly TopicAcl[]): TopicAcl[] {
  return sourceAcls
    .filter((a) => !(a.permissionType === AclPermissionType.ALLOW && a.operation === AclOperation.WRITE))
    .filter((a) => shouldReplicateTopic(flow, a.topic))
    .map((a) => ({
      ...a, topic: flow.policy.formatRemoteTopic(flow.source, a.topic),
      operation: a.permissionType === AclPermissionType.ALLOW && a.operation === AclOperation.ALL ? AclOperation.READ : a.operation,
    }));
}

const aclKey = (a: TopicAcl) => `${a.topic}\u0000${a.principal}\u0000${a.host}\u0000${a.operation}\u0000${a.permissionType}`;

/** Bytes a record takes as MirrorMaker 2's byte-count counts it (key, value, headers). */
function recordBytes(r: FetchedRecord): number {
  let n = (r.key?.length ?? 0) + (r.value?.length ?? 0);
  for (const h of r.headers) n += Buffer.byteLength(h.key) + (h.value?.length ?? 0);
  return n;
}

/** Splits a partition's records into batches under the target's usual max.message.bytes. */
function chunks(records: FetchedRecord[]): FetchedRecord[][] {
  const out: FetchedRecord[][] = [];
  let current: FetchedRecord[] = [];
  let bytes = 0;
  for (const r of records) {
    const size = recordBytes(r) + 64;
    if (current.length > 0 && (bytes + size > limits.mirrorBatchBytesMax || current.length >= limits.mirrorBatchRecordsMax)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(r);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

const asInput = (r: FetchedRecord): RecordInput => ({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp });

/** A fetched partition's data in offset order: source batches passed on whole, and records. */
const runsOf = (f: FetchedPartition): FetchedRun[] => f.runs ?? (f.records.length > 0 ? [{ records: f.records }] : []);

/** How many records a fetch brought, their bytes (a whole batch: its records section) and the newest timestamp. */
function summary(f: FetchedPartition): { count: number; bytes: number; newestMs: number | null } {
  let count = 0;
  let bytes = 0;
  let newestMs: number | null = null;
  for (const run of runsOf(f)) {
    if (run.batch !== undefined) {
      count += run.batch.recordCount;
      bytes += run.batch.sizeInBytes - RECORD_BATCH_HEADER_BYTES;
      newestMs = run.batch.maxTimestamp;
    } else {
      count += run.records.length;
      for (const r of run.records) bytes += recordBytes(r);
      const newest = run.records[run.records.length - 1];
      if (newest !== undefined) newestMs = newest.timestamp;
    }
  }
  return { count, bytes, newestMs };
}

/** Where each mirrored record came from and went: upstream offsets and their downstream offsets (-1: unknown). */
interface Copied { upstream: number[]; downstream: number[] }

export class MirrorSourceTask {
  private readonly log: Logger;
  private readonly source: Cluster;
  private readonly target: Cluster;
  private readonly syncs: Cluster;
  private readonly producer: Producer;
  private readonly syncProducer: Producer;
  private readonly offsetsTopic: string;
  private readonly syncsTopic: string;
  /** Source topic → its remote name and partition count. */
  private readonly topics = new Map<string, { remote: string; partitions: number }>();
  /** Source topic → partition → next offset to mirror. */
  private readonly positions = new Map<string, Map<number, number>>();
  /** Source offsets loaded from the offsets topic: the last offset mirrored, by partitionKey. */
  private stored = new Map<string, number>();
  /** Partitions whose position moved since the offsets topic last heard of them. */
  private readonly dirty = new Set<string>();
  private readonly deciders = new Map<string, OffsetSyncDecider>();
  /** Syncs due now, in order (every one the decider asked for: a burst keeps its intermediate syncs, which translate older positions). */
  private pendingSyncs: OffsetSync[] = [];
  private readonly delayedSyncs = new Map<string, OffsetSync>();
  private nextRefreshMs = 0;
  private nextConfigSyncMs = 0;
  private nextAclSyncMs = 0;
  /** A fetch started while the previous poll's records were written, with the positions it asked at. */
  private prefetch: { positions: Map<string, Map<number, number>>; fetched: Promise<FetchedPartition[]> } | null = null;
  private nextFlushMs = 0;

  constructor(private readonly flow: FlowSettings, private readonly ctx: TaskContext) {
    this.log = ctx.logger;
    const src = ctx.clients.get(flow.source)!;
    const tgt = ctx.clients.get(flow.target)!;
    this.source = new Cluster({ ...src, clientId: `mirror-source-${flow.source}->${flow.target}` });
    this.target = new Cluster({ ...tgt, clientId: `mirror-target-${flow.source}->${flow.target}` });
    this.syncs = flow.offsetSyncsTopicLocation === 'source' ? this.source : this.target;
    this.offsetsTopic = sourceOffsetsTopic(flow.source);
    this.syncsTopic = flow.policy.offsetSyncsTopic(flow.target);
    this.producer = new Producer(this.target, {
      // One transactional id per flow: a restarted mirror fences the one it replaces.
      transactionalId: flow.exactlyOnce ? `mm2-${flow.source}->${flow.target}` : null, transactionTimeoutMs: 60_000, deliveryTimeoutMs: 30_000,
    });
    this.syncProducer = new Producer(this.syncs, { transactionalId: null, transactionTimeoutMs: 60_000, deliveryTimeoutMs: 30_000 });
  }

  async run(): Promise<void> {
    await runTaskLoop(this.ctx, {
      start: () => this.start(),
      step: async () => {
        const now = Date.now();
        if (now >= this.nextRefreshMs) await this.refreshTopics();
        if (this.flow.syncTopicConfigs && now >= this.nextConfigSyncMs) await this.syncTopicConfigs();
        if (this.flow.syncTopicAcls && now >= this.nextAclSyncMs) await this.syncTopicAcls();
        await this.pollOnce();
        if (Date.now() >= this.nextFlushMs) await this.flush();
      },
      recover: () => this.recover(),
      fail: (phase, err) => this.fail(phase === 'start' ? 'start' : 'poll', err),
      startRetryMs: 1000, pauseAfterFailureMs: 500, pauseAfterStepMs: 0,
    });
    await this.flush().catch(() => {});
    this.close();
  }

  close(): void {
    this.source.close();
    this.target.close();
  }

  private fail(what: string, err: unknown): void {
    this.log.warn(`${this.flow.source}->${this.flow.target} ${what}: ${messageOf(err)}`);
    this.ctx.metrics.error(this.flow.source, this.flow.target, messageOf(err));
  }

  /** Internal topics, the stored source offsets, the producers. */
  private async start(): Promise<void> {
    const f = this.flow;
    await ensureTopic(this.target.client, this.offsetsTopic, 1, f.offsetStorageReplicationFactor, [{ name: 'cleanup.policy', value: 'compact' }]);
    await ensureTopic(this.syncs.client, this.syncsTopic, 1, f.offsetSyncsTopicReplicationFactor, [{ name: 'cleanup.policy', value: 'compact' }]);
    await this.producer.init(Date.now() + 30_000);
    await this.syncProducer.init(Date.now() + 30_000);
    await this.loadSourceOffsets();
    this.ctx.metrics.flow(f.source, f.target, true);
    this.log.info(`${f.source}->${f.target}: mirroring with ${f.policy.name}, ${f.exactlyOnce ? 'exactly once' : 'at least once'}; offsets in ${this.offsetsTopic} on ${f.target}, offset syncs in ${this.syncsTopic} on ${f.offsetSyncsTopicLocation === 'source' ? f.source : f.target}`);
  }

  /** Reads the offsets topic to its end (committed records only) into `stored`. */
  private async loadSourceOffsets(): Promise<void> {
    const stored = new Map<string, number>();
    await readToEnd(this.target, this.offsetsTopic, new Map([[0, 0]]), Date.now() + this.ctx.loadTimeoutMs, (_p, r) => {
      const o = decodeSourceOffset(r.key, r.value);
      if (o !== null && o.cluster === this.flow.source) stored.set(partitionKey(o.topic, o.partition), o.offset);
    });
    this.stored = stored;
    // Positions follow what was stored (after an aborted transaction, that is where to start again).
    for (const [topic, partitions] of this.positions) {
      for (const p of partitions.keys()) partitions.set(p, (stored.get(partitionKey(topic, p)) ?? -1) + 1);
    }
    this.dirty.clear();
  }

  /** New topics and partitions at the source; their remote topics on the target. */
  private async refreshTopics(): Promise<void> {
    const f = this.flow;
    this.nextRefreshMs = f.refreshTopics ? Date.now() + f.refreshTopicsIntervalMs : Number.MAX_SAFE_INTEGER;
    const sourceTopics = (await listTopics(this.source.client)).filter((t) => t.errorCode === 0 && !t.isInternal && shouldReplicateTopic(f, t.name));
    let partitionsTotal = 0;
    for (const t of sourceTopics.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      partitionsTotal += t.partitions.length;
      if (partitionsTotal > limits.mirrorPartitionsMax) throw new Error(`more than ${limits.mirrorPartitionsMax} source partitions match the flow's topics; ${t.name} and later are not mirrored`);
      const known = this.topics.get(t.name);
      const count = t.partitions.length;
      if (known !== undefined && known.partitions >= count) continue;
      const remote = f.policy.formatRemoteTopic(f.source, t.name);
      if (known === undefined) {
        const configs = f.syncTopicConfigs ? (await topicOverrides(this.source.client, t.name)).filter((c) => !f.configPropertiesExclude.test(c.name)) : [];
        const created = await ensureTopic(this.target.client, remote, count, f.replicationFactor, configs);
        if (created) this.log.info(`${f.source}->${f.target}: created ${remote} with ${count} partitions`);
      }
      await ensurePartitions(this.target.client, remote, count);
      const positions = this.positions.get(t.name) ?? new Map<number, number>();
      for (let p = known?.partitions ?? 0; p < count; p++) {
        positions.set(p, (this.stored.get(partitionKey(t.name, p)) ?? -1) + 1);
        // A restarted mirror shows where it resumes, not 0, until records flow again.
        this.ctx.metrics.partition(f.source, f.target, t.name, p, remote).position = positions.get(p)!;
      }
      this.positions.set(t.name, positions);
      this.topics.set(t.name, { remote, partitions: count });
    }
  }

  /** Topic configs set at the source, set on the remote topics too (sync.topic.configs). */
  private async syncTopicConfigs(): Promise<void> {
    this.nextConfigSyncMs = Date.now() + this.flow.syncTopicConfigsIntervalMs;
    for (const [topic, { remote }] of this.topics) {
      const configs = (await topicOverrides(this.source.client, topic)).filter((c) => !this.flow.configPropertiesExclude.test(c.name));
      const current = new Map((await topicOverrides(this.target.client, remote)).map((c) => [c.name, c.value]));
      const changed = configs.filter((c) => current.get(c.name) !== c.value);
      if (changed.length > 0) {
        await setTopicConfigs(this.target.client, remote, changed);
        this.log.info(`${this.flow.source}->${this.flow.target}: ${remote} configs ${changed.map((c) => `${c.name}=${c.value}`).join(', ')}`);
      }
    }
  }

  /**
   * Topic ACLs at the source, created on the target (sync.topic.acls). Only added, never removed,
   * as MirrorMaker 2 does; a cluster without an authorizer on either side has nothing to sync.
   */
  private async syncTopicAcls(): Promise<void> {
    this.nextAclSyncMs = Date.now() + this.flow.syncTopicAclsIntervalMs;
    const source = await literalTopicAcls(this.source.client);
    if (source === null) return;
    const wanted = targetTopicAcls(this.flow, source);
    if (wanted.length === 0) return;
    const present = await literalTopicAcls(this.target.client);
    if (present === null) return;
    const have = new Set(present.map(aclKey));
    const missing = wanted.filter((a) => !have.has(aclKey(a)));
    if (missing.length === 0) return;
    await createTopicAcls(this.target.client, missing);
    this.log.info(`${this.flow.source}->${this.flow.target}: created ${missing.length} topic ACL(s) on ${this.flow.target}`);
  }

  /** The source fetch at the given positions. */
  private fetchAt(positions: ReadonlyMap<string, ReadonlyMap<number, number>>): Promise<FetchedPartition[]> {
    return fetchCommitted(this.source, positions, {
      maxWaitMs: 200, partitionMaxBytes: limits.mirrorFetchPartitionBytesMax,
      wholeBatches: { min: limits.mirrorWholeBatchBytesMin, max: limits.mirrorWholeBatchBytesMax },
    });
  }

  /**
   * The prefetched answer if it was asked at exactly the current positions (a failed write, a
   * recovery, a skip or new partitions make it stale: then it is dropped and never used).
   */
  private takePrefetch(): Promise<FetchedPartition[]> | null {
    const p = this.prefetch;
    this.prefetch = null;
    if (p === null) return null;
    for (const [topic, partitions] of this.positions) {
      const at = p.positions.get(topic);
      if (at === undefined || at.size !== partitions.size) return null;
      for (const [partition, offset] of partitions) if (at.get(partition) !== offset) return null;
    }
    if (p.positions.size !== this.positions.size) return null;
    return p.fetched;
  }

  /** One fetch from the source and its records written to the target. */
  private async pollOnce(): Promise<void> {
    if (this.positions.size === 0) { await pause(this.ctx, 200); return; }
    let fetched: FetchedPartition[];
    try {
      fetched = await (this.takePrefetch() ?? this.fetchAt(this.positions));
    } catch (err) {
      if (err instanceof KafkaError && err.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) { await this.skipToLogStart(); return; }
      throw err;
    }
    const now = Date.now();
    for (const f of fetched) {
      const s = this.status(f.topic, f.partition);
      s.highWatermark = f.highWatermark;
      const newestMs = summary(f).newestMs;
      if (newestMs !== null) s.recordAgeMs = Math.max(0, now - newestMs);
    }
    const moved = fetched.filter((f) => f.next > this.positions.get(f.topic)!.get(f.partition)!);
    if (moved.length === 0) return;
    if (this.flow.exactlyOnce) { await this.writeExactlyOnce(moved); return; }
    // At least once: the next fetch (at the positions this write will reach) runs while the target
    // acknowledges this one. It is used only if the write succeeded for every partition.
    const next = new Map([...this.positions].map(([topic, partitions]) => [topic, new Map(partitions)]));
    for (const f of moved) next.get(f.topic)!.set(f.partition, f.next);
    const prefetched = this.fetchAt(next);
    prefetched.catch(() => undefined);
    try {
      await this.writeAtLeastOnce(moved);
    } catch (err) {
      this.prefetch = null;
      throw err;
    }
    this.prefetch = { positions: next, fetched: prefetched };
  }

  /** Records first, then (after their acknowledgements) the positions. */
  private async writeAtLeastOnce(moved: FetchedPartition[]): Promise<void> {
    const results = await Promise.allSettled(moved.map((f) => this.copy(f)));
    const failed = results.find((r) => r.status === 'rejected');
    moved.forEach((f, i) => { if (results[i]!.status === 'fulfilled') this.advance(f, (results[i] as PromiseFulfilledResult<Copied>).value); });
    // The positions are stored at the next flush (offset.flush.interval.ms), as Connect does: a
    // crash before it mirrors those records again, which at least once allows.
    await this.firePendingSyncs();
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
  }

  /** Records and positions in one transaction of the target. */
  private async writeExactlyOnce(moved: FetchedPartition[]): Promise<void> {
    const deadline = Date.now() + 30_000;
    const parts = new Map<string, number[]>([[this.offsetsTopic, [0]]]);
    for (const f of moved) {
      const remote = this.topics.get(f.topic)!.remote;
      if (runsOf(f).length > 0) parts.set(remote, [...(parts.get(remote) ?? []), f.partition]);
    }
    await this.producer.addPartitions(parts, deadline);
    const downstream = await Promise.all(moved.map((f) => this.copy(f)));
    const before = new Map(moved.map((f) => [partitionKey(f.topic, f.partition), this.positions.get(f.topic)!.get(f.partition)!]));
    moved.forEach((f, i) => this.advance(f, downstream[i]!, false));
    try {
      await this.writeOffsets(deadline);
      await this.producer.end(true, deadline);
    } catch (err) {
      // Not committed: back to where the committed offsets say (recover() reloads them).
      for (const f of moved) this.positions.get(f.topic)!.set(f.partition, before.get(partitionKey(f.topic, f.partition))!);
      throw err;
    }
    moved.forEach((f, i) => this.noteSyncs(f, downstream[i]!));
    this.noteLatency(moved);
    await this.firePendingSyncs();
  }

  /**
   * Writes one partition's records to its remote partition, in order: large source batches whole
   * (their records as bytes), the rest in batches of the mirror's own. Resolves with each record's
   * upstream and downstream offsets.
   */
  private async copy(f: FetchedPartition): Promise<Copied> {
    const remote = this.topics.get(f.topic)!.remote;
    const copied: Copied = { upstream: [], downstream: [] };
    // base null: the broker had the batch already (an idempotent retry); its offsets are unknown,
    // and no sync is written for them.
    const note = (upstream: number, base: number | null, i: number) => { copied.upstream.push(upstream); copied.downstream.push(base === null ? -1 : base + i); };
    for (const run of runsOf(f)) {
      if (run.batch !== undefined) {
        const base = await this.producer.sendBatch(remote, f.partition, run.batch, Date.now() + 30_000);
        for (let i = 0; i < run.batch.recordCount; i++) note(run.batch.baseOffset + i, base, i);
        continue;
      }
      for (const batch of chunks(run.records)) {
        const base = await this.producer.send(remote, f.partition, batch.map(asInput), Date.now() + 30_000);
        batch.forEach((r, i) => note(r.offset, base, i));
      }
    }
    return copied;
  }

  private status(topic: string, partition: number) {
    return this.ctx.metrics.partition(this.flow.source, this.flow.target, topic, partition, this.topics.get(topic)?.remote ?? topic);
  }

  /** Moves a partition's position past what was fetched, and (at least once) notes its syncs and latencies. */
  private advance(f: FetchedPartition, copied: Copied, acknowledged = true): void {
    this.positions.get(f.topic)!.set(f.partition, f.next);
    this.dirty.add(partitionKey(f.topic, f.partition));
    const s = this.status(f.topic, f.partition);
    s.position = f.next;
    if (acknowledged) {
      this.noteSyncs(f, copied);
      this.noteLatency([f]);
    }
  }

  private noteLatency(fs: FetchedPartition[]): void {
    const now = Date.now();
    for (const f of fs) {
      const s = this.status(f.topic, f.partition);
      s.position = f.next;
      const { count, bytes, newestMs } = summary(f);
      s.recordCount += count;
      s.byteCount += bytes;
      if (newestMs !== null) {
        s.lastTimestampMs = newestMs;
        s.replicationLatencyMs = Math.max(0, now - newestMs);
        s.replicationLatencyMsMax = Math.max(s.replicationLatencyMsMax, s.replicationLatencyMs);
      }
    }
  }

  private noteSyncs(f: FetchedPartition, copied: Copied): void {
    const key = partitionKey(f.topic, f.partition);
    let decider = this.deciders.get(key);
    if (decider === undefined) { decider = new OffsetSyncDecider(this.flow.offsetLagMax); this.deciders.set(key, decider); }
    copied.upstream.forEach((upstream, i) => {
      const d = copied.downstream[i]!;
      if (d < 0) return;
      const sync = { topic: f.topic, partition: f.partition, upstreamOffset: upstream, downstreamOffset: d };
      if (decider.mirrored(upstream, d)) {
        this.delayedSyncs.delete(key);
        this.pendingSyncs.push(sync);
      } else {
        this.delayedSyncs.set(key, sync);
      }
    });
  }

  /**
   * Positions of the partitions that moved, as Connect's source offsets (the last offset mirrored).
   * `deadline` null: at least once, outside any transaction.
   */
  private async writeOffsets(deadline: number | null): Promise<void> {
    if (this.dirty.size === 0) return;
    const records: RecordInput[] = [];
    const written = [...this.dirty];
    for (const [topic, partitions] of this.positions) {
      for (const [partition, next] of partitions) {
        if (!this.dirty.has(partitionKey(topic, partition))) continue;
        const { key, value } = encodeSourceOffset({ cluster: this.flow.source, topic, partition, offset: next - 1 });
        records.push({ key, value });
      }
    }
    await this.producer.send(this.offsetsTopic, 0, records, deadline ?? Date.now() + 30_000);
    for (const k of written) this.dirty.delete(k);
  }

  /** Sends the syncs due now (after the records they describe are acknowledged or committed). */
  private async firePendingSyncs(): Promise<void> {
    if (this.pendingSyncs.length === 0) return;
    // Bounded: a compacted source can make every record a sync; the newest ones matter most.
    const syncs = this.pendingSyncs.slice(-limits.mirrorSyncsPerWriteMax);
    this.pendingSyncs = [];
    await this.syncProducer.send(this.syncsTopic, 0, syncs.map(encodeOffsetSync), Date.now() + 30_000);
  }

  /** Connect's offset flush: delayed syncs go out, and (at least once) positions not yet stored. */
  private async flush(): Promise<void> {
    this.nextFlushMs = Date.now() + this.ctx.offsetFlushIntervalMs;
    this.pendingSyncs.push(...this.delayedSyncs.values());
    this.delayedSyncs.clear();
    if (!this.flow.exactlyOnce) await this.writeOffsets(null);
    await this.firePendingSyncs();
  }

  /** After a failure: a fresh producer (which aborts an open transaction) and, exactly once, the committed positions. */
  private async recover(): Promise<void> {
    try {
      // A send that failed may have left its sequence taken: only a new producer id starts clean.
      await this.producer.init(Date.now() + 30_000);
      if (this.flow.exactlyOnce) await this.loadSourceOffsets();
      await this.syncProducer.init(Date.now() + 30_000);
    } catch (err) {
      this.fail('recover', err);
    }
  }

  /** Positions below the log start (retention, or a recreated topic) move to it (auto.offset.reset=earliest, as MirrorMaker 2 sets). */
  private async skipToLogStart(): Promise<void> {
    for (const [topic, partitions] of this.positions) {
      const earliest = await earliestOffsets(this.source.client, topic, [...partitions.keys()]);
      for (const [p, start] of earliest) {
        if (partitions.get(p)! < start) {
          this.log.warn(`${this.flow.source}->${this.flow.target}: ${topic}-${p} position ${partitions.get(p)} is below the log start ${start}; skipping to it`);
          partitions.set(p, start);
        }
      }
    }
  }
}
