// A share consumer (KIP-932) for `logline consume --share-group`: joins the group with
// ShareGroupHeartbeat (and keeps heartbeating at the interval the coordinator gives), fetches from
// the leader of each assigned partition with ShareFetch in a share session per leader, and
// acknowledges each record it handled (accept, release or reject), piggybacked on the next
// ShareFetch. close() sends what is still unacknowledged with the session's final epoch, which
// releases every record it still holds at once, and leaves the group.
import { randomUUID } from 'node:crypto';
import { ClusterClient, KafkaError, coordinatorFor, type BrokerConnection } from '../client/index.js';
import { ApiKey, ErrorCode } from '../protocol/index.js';
import { decompressBatchBody, iterateBatches, iterateRecords } from '../records/index.js';

export const ACCEPT = 1;
export const RELEASE = 2;
export const REJECT = 3;

export interface ShareRecord {
  topic: string; partition: number; offset: number; deliveryCount: number; timestamp: number;
  key: Buffer | null; value: Buffer | null; headers: { key: string; value: Buffer | null }[];
}

interface Session { epoch: number; sent: Set<string> }
interface AckQueue { waiting: { topicId: string; partition: number; offset: number; type: number; resolve(code: number): void }[]; busy: boolean }

const FINAL_EPOCH = -1;
const LEAVE_EPOCH = -1;
/** The most records one ShareFetch asks for. */
const MAX_RECORDS = 500;

const splitKey = (k: string): [string, number] => [k.slice(0, k.lastIndexOf(':')), Number(k.slice(k.lastIndexOf(':') + 1))];

export class ShareConsumer {
  readonly memberId = randomUUID();
  private memberEpoch = 0;
  private coordinator: BrokerConnection | null = null;
  private assignment: { topicId: string; partitions: number[] }[] = [];
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private readonly sessions = new Map<number, Session>();
  /** Acknowledgements waiting for the next request to the partition's leader: `topicId:partition` → offset → type. */
  private readonly pending = new Map<string, Map<number, number>>();
  /** acknowledgeNow's acknowledgements per leader, waiting for the ShareAcknowledge in flight there. */
  private readonly ackQueues = new Map<number, AckQueue>();
  private names = new Map<string, string>();
  private meta: Awaited<ReturnType<ClusterClient['metadata']>> | null = null;
  private metaAssignment: ShareConsumer['assignment'] | null = null;
  /** Called with the acknowledgements a leader confirmed (its answer's AcknowledgeErrorCode was NONE). */
  onAcknowledged: ((topic: string, partition: number, acks: { offset: number; type: number }[]) => void) | null = null;

  constructor(private readonly client: ClusterClient, readonly group: string, readonly topics: string[]) {}

  /** Joins the group and waits for an assignment. */
  async subscribe(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    this.coordinator = await coordinatorFor(this.client, this.group);
    for (;;) {
      const interval = await this.heartbeat(this.topics);
      if (this.assignment.length > 0) { this.schedule(interval); return; }
      if (Date.now() > deadline) throw new Error(`share group ${this.group}: no partitions assigned in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private async heartbeat(subscribed: string[] | null): Promise<number> {
    const r = await this.coordinator!.send(ApiKey.ShareGroupHeartbeat, this.coordinator!.version(ApiKey.ShareGroupHeartbeat, 1), {
      groupId: this.group, memberId: this.memberId, memberEpoch: this.memberEpoch, rackId: null, subscribedTopicNames: subscribed,
    });
    if (r.errorCode !== ErrorCode.NONE) throw new KafkaError(r.errorCode, r.errorMessage ?? this.group);
    this.memberEpoch = r.memberEpoch;
    if (r.assignment !== null) this.assignment = r.assignment.topicPartitions;
    return r.heartbeatIntervalMs;
  }

  private schedule(intervalMs: number): void {
    this.heartbeatTimer = setTimeout(() => {
      this.heartbeatAgain().then((next) => this.schedule(next), () => this.schedule(intervalMs));
    }, intervalMs);
    this.heartbeatTimer.unref();
  }

  /**
   * A heartbeat after the first: to the coordinator found again when it moved or its broker is
   * gone, and as a new join (epoch 0, with the subscription) when the group no longer knows this
   * member (its session ran out meanwhile).
   */
  private async heartbeatAgain(): Promise<number> {
    try {
      if (this.coordinator === null || this.coordinator.closed) this.coordinator = await coordinatorFor(this.client, this.group);
      return await this.heartbeat(this.memberEpoch === 0 ? this.topics : null);
    } catch (err) {
      const code = err instanceof KafkaError ? err.errorCode : -1;
      if (code === ErrorCode.UNKNOWN_MEMBER_ID || code === ErrorCode.FENCED_MEMBER_EPOCH) this.memberEpoch = 0;
      else this.coordinator = null;
      throw err;
    }
  }

  acknowledge(r: ShareRecord, type: number): void {
    const k = `${this.topicIdOf(r.topic)}:${r.partition}`;
    const m = this.pending.get(k) ?? new Map<number, number>();
    m.set(r.offset, type);
    this.pending.set(k, m);
  }

  /**
   * Acknowledges one record without waiting for the next poll (ShareAcknowledge, as a consumer's
   * commit): resolves with its partition's error code once the leader answered. While one
   * ShareAcknowledge is in flight to a leader, the acknowledgements made meanwhile wait and go
   * together in the next (the session's epochs are sequential), so a consumer acknowledging
   * records faster than one round trip each is not held to one per round trip. Not to be called
   * while a poll is in flight (the poll's ShareFetch is in the same session).
   */
  acknowledgeNow(r: ShareRecord, type: number): Promise<number> {
    const topicId = this.topicIdOf(r.topic);
    const leader = this.meta?.find((t) => t.name === r.topic)?.partitions.find((p) => p.partition === r.partition)?.leader ?? -1;
    if (!this.sessions.has(leader)) return Promise.resolve(ErrorCode.SHARE_SESSION_NOT_FOUND);
    const q = this.ackQueues.get(leader) ?? { waiting: [], busy: false };
    this.ackQueues.set(leader, q);
    const done = new Promise<number>((resolve) => q.waiting.push({ topicId, partition: r.partition, offset: r.offset, type, resolve }));
    if (!q.busy) void this.flushAcks(leader, q);
    return done;
  }

  private async flushAcks(leader: number, q: AckQueue): Promise<void> {
    q.busy = true;
    try {
      while (q.waiting.length > 0) {
        const waiting = q.waiting.splice(0);
        const session = this.sessions.get(leader);
        if (session === undefined) { for (const w of waiting) w.resolve(ErrorCode.SHARE_SESSION_NOT_FOUND); continue; }
        for (const w of waiting) {
          const k = `${w.topicId}:${w.partition}`;
          this.pending.set(k, (this.pending.get(k) ?? new Map<number, number>()).set(w.offset, w.type));
        }
        const topics = new Map<string, { partitionIndex: number; acknowledgementBatches: ReturnType<ShareConsumer['takeAcks']> }[]>();
        for (const k of new Set(waiting.map((w) => `${w.topicId}:${w.partition}`))) {
          const [topicId, partition] = splitKey(k);
          topics.set(topicId, [...topics.get(topicId) ?? [], { partitionIndex: partition, acknowledgementBatches: this.takeAcks(topicId, partition) }]);
        }
        let codes: Map<string, number>;
        try {
          const conn = await this.client.broker(leader);
          const res = await conn.send(ApiKey.ShareAcknowledge, conn.version(ApiKey.ShareAcknowledge, 1), {
            groupId: this.group, memberId: this.memberId, shareSessionEpoch: session.epoch, topics: [...topics].map(([topicId, partitions]) => ({ topicId, partitions })),
          });
          if (res.errorCode !== ErrorCode.NONE) this.sessions.delete(leader);
          else session.epoch++;
          codes = new Map(res.responses.flatMap((t: any) => t.partitions.map((p: any) => [`${t.topicId}:${p.partitionIndex}`, res.errorCode || p.errorCode])));
          if (res.errorCode !== ErrorCode.NONE) for (const w of waiting) codes.set(`${w.topicId}:${w.partition}`, res.errorCode);
        } catch {
          this.sessions.delete(leader);
          codes = new Map(waiting.map((w) => [`${w.topicId}:${w.partition}`, ErrorCode.NETWORK_EXCEPTION]));
        }
        for (const [topicId, ps] of topics) {
          for (const p of ps) if (codes.get(`${topicId}:${p.partitionIndex}`) === ErrorCode.NONE) this.confirmed(this.names.get(topicId) ?? topicId, p.partitionIndex, p.acknowledgementBatches);
        }
        for (const w of waiting) w.resolve(codes.get(`${w.topicId}:${w.partition}`) ?? ErrorCode.UNKNOWN_SERVER_ERROR);
      }
    } finally {
      q.busy = false;
    }
  }

  private topicIdOf(name: string): string {
    for (const [id, n] of this.names) if (n === name) return id;
    return '';
  }

  /** The records acquired from every assigned partition's leader (waiting up to `maxWaitMs` for some). */
  async poll(maxWaitMs: number): Promise<ShareRecord[]> {
    // Metadata is asked again only when the assignment changed or a leader failed, as a consumer's cache.
    if (this.meta === null || this.metaAssignment !== this.assignment) {
      this.meta = await this.client.metadata(null);
      this.metaAssignment = this.assignment;
    }
    const meta = this.meta;
    this.names = new Map(meta.map((t) => [t.topicId, t.name]));
    const byLeader = new Map<number, { topicId: string; partition: number }[]>();
    for (const a of this.assignment) {
      const t = meta.find((x) => x.topicId === a.topicId);
      for (const partition of a.partitions) {
        const leader = t?.partitions.find((p) => p.partition === partition)?.leader ?? -1;
        if (leader < 0) continue;
        byLeader.set(leader, [...byLeader.get(leader) ?? [], { topicId: a.topicId, partition }]);
      }
    }
    // A leader none of whose partitions stays assigned still gets the acknowledgements owed to it, and forgets them.
    for (const leader of this.sessions.keys()) if (!byLeader.has(leader)) byLeader.set(leader, []);
    // A leader that fails (killed, moved) loses its session; the next poll opens a new one with
    // whoever leads then. Acknowledgements in the failed request are not confirmed: their records
    // come back to the group.
    const out = await Promise.all([...byLeader].map(([leader, partitions]) => this.fetchFrom(leader, partitions, maxWaitMs).catch(() => {
      this.sessions.delete(leader);
      this.meta = null;
      return [];
    })));
    return out.flat();
  }

  private takeAcks(topicId: string, partition: number): { firstOffset: bigint; lastOffset: bigint; acknowledgeTypes: number[] }[] {
    const k = `${topicId}:${partition}`;
    const m = this.pending.get(k);
    if (!m || m.size === 0) return [];
    this.pending.delete(k);
    const offsets = [...m.keys()].sort((a, b) => a - b);
    const batches: { firstOffset: bigint; lastOffset: bigint; acknowledgeTypes: number[] }[] = [];
    for (const o of offsets) {
      const last = batches[batches.length - 1];
      if (last && Number(last.lastOffset) === o - 1 && last.acknowledgeTypes[0] === m.get(o)) last.lastOffset = BigInt(o);
      else batches.push({ firstOffset: BigInt(o), lastOffset: BigInt(o), acknowledgeTypes: [m.get(o)!] });
    }
    return batches;
  }

  /**
   * Partitions of the session no longer assigned (the group moved them to another member): their
   * pending acknowledgements go in a ShareAcknowledge of their own, so no acquisition comes with
   * them, and the fetch that follows forgets them; the leader otherwise keeps acquiring records
   * for this member from them, which it would never acknowledge. The keys to forget; null when
   * the session is gone.
   */
  private async ackRevoked(conn: BrokerConnection, session: Session, assigned: Set<string>): Promise<string[] | null> {
    const revoked = session.epoch === 0 ? [] : [...session.sent].filter((k) => !assigned.has(k));
    const topics = new Map<string, { partitionIndex: number; acknowledgementBatches: ReturnType<ShareConsumer['takeAcks']> }[]>();
    const sent = new Map<string, ReturnType<ShareConsumer['takeAcks']>>();
    for (const k of revoked) {
      const [topicId, partition] = splitKey(k);
      const acks = this.takeAcks(topicId, partition);
      if (acks.length === 0) continue;
      sent.set(k, acks);
      topics.set(topicId, [...topics.get(topicId) ?? [], { partitionIndex: partition, acknowledgementBatches: acks }]);
    }
    if (topics.size === 0) return revoked;
    const r = await conn.send(ApiKey.ShareAcknowledge, conn.version(ApiKey.ShareAcknowledge, 1), {
      groupId: this.group, memberId: this.memberId, shareSessionEpoch: session.epoch, topics: [...topics].map(([topicId, partitions]) => ({ topicId, partitions })),
    });
    if (r.errorCode !== ErrorCode.NONE) return null;
    session.epoch++;
    for (const t of r.responses) {
      for (const p of t.partitions) {
        const acks = sent.get(`${t.topicId}:${p.partitionIndex}`);
        if (acks && p.errorCode === ErrorCode.NONE) this.confirmed(this.names.get(t.topicId) ?? t.topicId, p.partitionIndex, acks);
      }
    }
    return revoked;
  }

  private confirmed(topic: string, partition: number, acks: ReturnType<ShareConsumer['takeAcks']>): void {
    this.onAcknowledged?.(topic, partition, acks.flatMap((b) => Array.from({ length: Number(b.lastOffset - b.firstOffset) + 1 }, (_, i) => ({ offset: Number(b.firstOffset) + i, type: b.acknowledgeTypes[0]! }))));
  }

  private async fetchFrom(leader: number, partitions: { topicId: string; partition: number }[], maxWaitMs: number): Promise<ShareRecord[]> {
    const session = this.sessions.get(leader) ?? { epoch: 0, sent: new Set<string>() };
    const conn = await this.client.broker(leader);
    const forget = await this.ackRevoked(conn, session, new Set(partitions.map((p) => `${p.topicId}:${p.partition}`)));
    // Nothing assigned here any more: the session is dropped once its acknowledgements are sent (a later one starts at epoch 0).
    if (forget === null || partitions.length === 0) { this.sessions.delete(leader); return []; }
    const forgotten = new Map<string, number[]>();
    for (const k of forget) { const [topicId, partition] = splitKey(k); forgotten.set(topicId, [...forgotten.get(topicId) ?? [], partition]); }
    const topics = new Map<string, { partitionIndex: number; partitionMaxBytes: number; acknowledgementBatches: ReturnType<ShareConsumer['takeAcks']> }[]>();
    const sentAcks = new Map<string, ReturnType<ShareConsumer['takeAcks']>>();
    for (const p of partitions) {
      const acks = this.takeAcks(p.topicId, p.partition);
      if (acks.length > 0) sentAcks.set(`${p.topicId}:${p.partition}`, acks);
      // The session knows its partitions after the first request: later ones name only those with acknowledgements.
      if (session.epoch !== 0 && session.sent.has(`${p.topicId}:${p.partition}`) && acks.length === 0) continue;
      topics.set(p.topicId, [...topics.get(p.topicId) ?? [], { partitionIndex: p.partition, partitionMaxBytes: 1 << 20, acknowledgementBatches: acks }]);
    }
    const r = await conn.send(ApiKey.ShareFetch, conn.version(ApiKey.ShareFetch, 1), {
      groupId: this.group, memberId: this.memberId, shareSessionEpoch: session.epoch, maxWaitMs, minBytes: 1, maxBytes: 8 << 20, maxRecords: MAX_RECORDS, batchSize: MAX_RECORDS,
      topics: [...topics].map(([topicId, ps]) => ({ topicId, partitions: ps })), forgottenTopicsData: [...forgotten].map(([topicId, ps]) => ({ topicId, partitions: ps })),
    });
    if (r.errorCode !== ErrorCode.NONE) {
      // The session is gone (the broker restarted, or evicted it): the next fetch opens a new one.
      this.sessions.delete(leader);
      if (r.errorCode === ErrorCode.SHARE_SESSION_NOT_FOUND || r.errorCode === ErrorCode.INVALID_SHARE_SESSION_EPOCH) return [];
      throw new KafkaError(r.errorCode, r.errorMessage ?? 'ShareFetch');
    }
    for (const k of forget) session.sent.delete(k);
    for (const p of partitions) session.sent.add(`${p.topicId}:${p.partition}`);
    session.epoch++;
    this.sessions.set(leader, session);
    const out: ShareRecord[] = [];
    for (const t of r.responses) {
      const topic = this.names.get(t.topicId) ?? t.topicId;
      for (const p of t.partitions) {
        const acks = sentAcks.get(`${t.topicId}:${p.partitionIndex}`);
        if (acks && p.acknowledgeErrorCode === ErrorCode.NONE) this.confirmed(topic, p.partitionIndex, acks);
        if (p.errorCode !== ErrorCode.NONE) { this.sessions.delete(leader); this.meta = null; }
        if (p.errorCode !== ErrorCode.NONE || p.acquiredRecords.length === 0 || !p.records) continue;
        const acquired = p.acquiredRecords.map((a: any) => ({ first: Number(a.firstOffset), last: Number(a.lastOffset), deliveryCount: a.deliveryCount as number }));
        for (const batch of iterateBatches(p.records)) {
          if (batch.isControl) continue;
          const body = await decompressBatchBody(batch);
          for (const rec of iterateRecords(batch, body)) {
            const a = acquired.find((x: { first: number; last: number }) => rec.offset >= x.first && rec.offset <= x.last);
            if (!a) continue;
            out.push({ topic, partition: p.partitionIndex, offset: rec.offset, deliveryCount: a.deliveryCount, timestamp: rec.timestamp, key: rec.key, value: rec.value, headers: rec.headers });
          }
        }
      }
    }
    return out;
  }

  /** Sends the last acknowledgements, ends each share session (what is still held is released) and leaves the group. */
  async close(): Promise<void> {
    if (this.heartbeatTimer) clearTimeout(this.heartbeatTimer);
    await Promise.all([...this.sessions].map(async ([leader, session]) => {
      const topics = new Map<string, { partitionIndex: number; acknowledgementBatches: ReturnType<ShareConsumer['takeAcks']> }[]>();
      for (const k of session.sent) {
        const [topicId, partition] = splitKey(k);
        const acks = this.takeAcks(topicId, partition);
        if (acks.length > 0) topics.set(topicId, [...topics.get(topicId) ?? [], { partitionIndex: partition, acknowledgementBatches: acks }]);
      }
      const conn = await this.client.broker(leader);
      await conn.send(ApiKey.ShareAcknowledge, conn.version(ApiKey.ShareAcknowledge, 1), {
        groupId: this.group, memberId: this.memberId, shareSessionEpoch: FINAL_EPOCH, topics: [...topics].map(([topicId, partitions]) => ({ topicId, partitions })),
      }).catch(() => undefined);
    }));
    this.sessions.clear();
    if (this.coordinator) {
      this.memberEpoch = LEAVE_EPOCH;
      await this.heartbeat(null).catch(() => undefined);
    }
  }
}
