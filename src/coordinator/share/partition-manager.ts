// The share-partition leader side (Kafka's SharePartitionManager): the share-partitions of the
// partitions this broker leads, one per (group, topic, partition), loaded from the share
// coordinator the first time a member fetches them under a leader epoch, and written back to it
// after every change of state (acquisition, acknowledgement, release, lock expiry) before the
// answer goes out, so a new leader loses no acknowledgement and redelivers only what was in flight
// with its delivery count. Operations on one share-partition run one at a time (the state machine
// is synchronous, the reads and writes around it are not). Acquisition locks are timers here, fed
// back into the state machine as time.
import { iterateBatches, readRecords, type RecordInput } from '../../records/index.js';
import { ErrorCode, errorName } from '../../protocol/index.js';
import type { Clock } from '../../util/index.js';
import type { Scheduler } from '../../replication/index.js';
import { SharePartition, type AcknowledgementBatch, type DeadLetter, type AcquiredRange, type BatchSpan, type SharePartitionConfig, type StateBatch } from './share-partition.js';
import type { SharePartitionKey } from './state-records.js';

/** The per-group settings a share-partition runs with (share.* group configs over their group.share.* broker defaults). */
export interface ShareGroupSettings extends SharePartitionConfig {
  /**
   * share.auto.offset.reset: where a share-partition without state starts: the log start, the
   * high watermark, or (by_duration:<d>) the first record at most that many milliseconds old.
   */
  autoOffsetReset: 'earliest' | 'latest' | { byDurationMs: number };
  /** share.isolation.level: 1 read_committed. */
  isolationLevel: 0 | 1;
  /** errors.deadletterqueue.topic.name (KIP-1191): where rejected records and those past the delivery limit are written; null: nowhere. */
  deadLetterTopic: string | null;
  /** errors.deadletterqueue.copy.record.enable: a dead letter carries the record's key, value and headers, not only the context headers. */
  deadLetterCopyRecord: boolean;
}

/** Writes dead letters to a topic, wherever its partition is led (acks=all); resolves with 0 or an error code. */
export interface DeadLetterWriter {
  write(topic: string, sourcePartition: number, records: RecordInput[]): Promise<number>;
}

/**
 * The headers a dead letter carries (KIP-1191's context, named like Kafka Connect's
 * `__connect.errors.*` headers): the group, where the record was, why it was archived, and how
 * many times it was delivered.
 */
export const DEAD_LETTER_HEADERS = {
  groupId: '__dlq.errors.group.id', topic: '__dlq.errors.topic', partition: '__dlq.errors.partition', offset: '__dlq.errors.offset',
  reason: '__dlq.errors.reason', deliveryCount: '__dlq.errors.delivery.count',
} as const;

/** The share coordinator, here or on another broker. */
export interface SharePersister {
  read(k: SharePartitionKey, leaderEpoch: number): Promise<{ errorCode: number; stateEpoch?: number; startOffset?: number; stateBatches?: StateBatch[] }>;
  initialize(k: SharePartitionKey, stateEpoch: number, startOffset: number): Promise<number>;
  write(p: SharePartitionKey & { stateEpoch: number; leaderEpoch: number; startOffset: number; stateBatches: StateBatch[] }): Promise<number>;
}

/** What the manager reads of the partitions led here (the replica manager provides it). */
export interface ShareLog {
  /** The partition's leader epoch when this broker leads it; null otherwise. */
  leaderEpoch(topic: string, partition: number): number | null;
  /** Whole batches from `offset` up to the high watermark (read_committed: the LSO), waiting up to `maxWaitMs` for some. */
  read(topic: string, partition: number, offset: number, maxBytes: number, isolationLevel: number, maxWaitMs: number):
    Promise<{ errorCode: number; records: Buffer | null; abortedTransactions: { producerId: number; firstOffset: number }[] }>;
  /** The log start offset and the high watermark (what auto.offset.reset chooses between). */
  bounds(topic: string, partition: number): { logStartOffset: number; highWatermark: number } | null;
  /** The first offset whose record's timestamp is at or after `timestampMs` (ListOffsets by timestamp); null when there is none. */
  offsetForTimestamp(topic: string, partition: number, timestampMs: number): Promise<number | null>;
}

export interface SharePartitionManagerDeps {
  clock: Clock;
  scheduler: Scheduler;
  persister: SharePersister;
  log: ShareLog;
  settings(groupId: string): ShareGroupSettings;
  deadLetters: DeadLetterWriter;
  warn(message: string): void;
}

export interface ShareFetchPartition {
  topicId: string;
  topic: string;
  partition: number;
  /** Acknowledgements piggybacked on the fetch for this partition: applied before acquiring, written with the acquisition in one state write. */
  acknowledgements?: AcknowledgementBatch[];
}
export interface ShareFetchResult {
  errorCode: number;
  records: Buffer | null;
  acquired: AcquiredRange[];
  /** The outcome of the partition's piggybacked acknowledgements; null when it had none. */
  acknowledgeErrorCode: number | null;
}

/** Counters for /metrics. */
export class ShareStats {
  recordsAcquired = 0;
  recordsAcknowledged = 0;
  lockTimeouts = 0;
  fetches = 0;
  acknowledgements = 0;
  /** Records archived because they were rejected or reached the delivery limit. */
  recordsArchived = 0;
  deadLettersWritten = 0;
  deadLetterFailures = 0;
}

interface Held {
  readonly key: SharePartitionKey;
  readonly topic: string;
  readonly leaderEpoch: number;
  readonly stateEpoch: number;
  readonly sp: SharePartition;
  queue: Promise<unknown>;
  timer: { cancel(): void } | null;
  timerAtMs: number | null;
  /** Fetches waiting for this share-partition to have records to acquire. */
  readonly wakers: Set<() => void>;
  /** Log bytes per offset in the last read (null before one): how much the next read needs for MaxRecords. */
  bytesPerRecord: number | null;
}

/** Write refusals meaning the state held here is not the share coordinator's any more. */
const STALE = new Set<number>([ErrorCode.FENCED_STATE_EPOCH, ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);

/** How much of the log one read for dead letters takes. */
const DEAD_LETTER_READ_BYTES = 1 << 20;

const id = (k: SharePartitionKey) => `${k.groupId}\u0000${k.topicId}\u0000${k.partition}`;

export class SharePartitionManager {
  private readonly held = new Map<string, Held>();
  private readonly loading = new Map<string, Promise<Held | number>>();
  readonly stats = new ShareStats();

  constructor(private readonly deps: SharePartitionManagerDeps) {}

  /** The share-partition under the current leader epoch, loading it first; an error code when it cannot be served here. */
  private async get(groupId: string, p: ShareFetchPartition): Promise<Held | number> {
    const epoch = this.deps.log.leaderEpoch(p.topic, p.partition);
    if (epoch === null) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    const key: SharePartitionKey = { groupId, topicId: p.topicId, partition: p.partition };
    const k = id(key);
    const h = this.held.get(k);
    if (h && h.leaderEpoch === epoch) return h;
    const running = this.loading.get(k);
    if (running) return running;
    const load = this.load(key, p.topic, epoch).finally(() => this.loading.delete(k));
    this.loading.set(k, load);
    return load;
  }

  private async load(key: SharePartitionKey, topic: string, leaderEpoch: number): Promise<Held | number> {
    const old = this.held.get(id(key));
    if (old) { old.timer?.cancel(); this.held.delete(id(key)); }
    const settings = this.deps.settings(key.groupId);
    const read = await this.deps.persister.read(key, leaderEpoch);
    let state: { stateEpoch: number; startOffset: number; stateBatches: StateBatch[] };
    if (read.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) {
      // A share-partition never seen: it starts where share.auto.offset.reset says.
      const bounds = this.deps.log.bounds(topic, key.partition);
      if (bounds === null) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
      const startOffset = await this.resetOffset(settings.autoOffsetReset, topic, key.partition, bounds);
      const code = await this.deps.persister.initialize(key, 0, startOffset);
      if (code !== ErrorCode.NONE) return code;
      state = { stateEpoch: 0, startOffset, stateBatches: [] };
    } else if (read.errorCode !== ErrorCode.NONE) {
      return read.errorCode;
    } else {
      state = { stateEpoch: read.stateEpoch!, startOffset: read.startOffset!, stateBatches: read.stateBatches! };
    }
    if (this.deps.log.leaderEpoch(topic, key.partition) !== leaderEpoch) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    const sp = new SharePartition(settings, { startOffset: state.startOffset, stateBatches: state.stateBatches });
    const bounds = this.deps.log.bounds(topic, key.partition);
    if (bounds) sp.maybeMoveToLogStart(bounds.logStartOffset);
    const h: Held = { key, topic, leaderEpoch, stateEpoch: state.stateEpoch, sp, queue: Promise.resolve(), timer: null, timerAtMs: null, wakers: new Set(), bytesPerRecord: null };
    this.held.set(id(key), h);
    return h;
  }

  /** Where share.auto.offset.reset starts a share-partition; by_duration past every record starts at the high watermark, as Kafka. */
  private async resetOffset(reset: ShareGroupSettings['autoOffsetReset'], topic: string, partition: number, bounds: { logStartOffset: number; highWatermark: number }): Promise<number> {
    if (reset === 'earliest') return bounds.logStartOffset;
    if (reset === 'latest') return bounds.highWatermark;
    const found = await this.deps.log.offsetForTimestamp(topic, partition, this.deps.clock.nowMs() - reset.byDurationMs);
    return found === null ? bounds.highWatermark : Math.min(Math.max(found, bounds.logStartOffset), bounds.highWatermark);
  }

  /** Runs `op` on the share-partition after the ones queued before it. */
  private serial<T>(h: Held, op: () => Promise<T>): Promise<T> {
    const next = h.queue.then(op, op);
    h.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Writes the share-partition's state. Refused because the state moved on without this leader (a
   * newer leader, offsets altered or deleted, the group deleted), what is held here is stale: it is
   * dropped, so the next request loads the state again, and the caller answers without records.
   */
  private async persist(h: Held): Promise<number> {
    const code = await this.deps.persister.write({ ...h.key, stateEpoch: h.stateEpoch, leaderEpoch: h.leaderEpoch, ...h.sp.persistentState() });
    if (code !== ErrorCode.NONE) this.deps.warn(`share-partition ${h.key.groupId}/${h.topic}-${h.key.partition}: state write failed with error ${code}`);
    if (STALE.has(code)) {
      this.drop(h);
      return code;
    }
    this.rescheduleLockTimer(h);
    // Dead letters go out once the archiving is written, so a new leader never writes them again
    // (a crash between the two loses them: at most once, as an archive is final).
    const letters = h.sp.takeDeadLetters();
    this.stats.recordsArchived += letters.length;
    if (code === ErrorCode.NONE && letters.length > 0) await this.writeDeadLetters(h, letters);
    return code;
  }

  /** The dead letters of one share-partition to its group's dead-letter topic, if it has one; failures are logged and counted. */
  private async writeDeadLetters(h: Held, letters: DeadLetter[]): Promise<void> {
    const settings = this.deps.settings(h.key.groupId);
    if (settings.deadLetterTopic === null) return;
    const wanted = new Map(letters.map((l) => [l.offset, l]));
    const out: RecordInput[] = [];
    const text = (v: string | number) => Buffer.from(String(v));
    let offset = Math.min(...wanted.keys());
    const last = Math.max(...wanted.keys());
    while (offset <= last) {
      const read = await this.deps.log.read(h.topic, h.key.partition, offset, DEAD_LETTER_READ_BYTES, 0, 0);
      if (read.errorCode !== ErrorCode.NONE || read.records === null || read.records.length === 0) break;
      let next = offset;
      for (const b of iterateBatches(read.records)) {
        next = Math.max(next, b.lastOffset + 1);
        if (b.isControl || ![...wanted.keys()].some((o) => o >= b.baseOffset && o <= b.lastOffset)) continue;
        for (const r of await readRecords(b)) {
          const l = wanted.get(r.offset);
          if (!l) continue;
          const context = [
            { key: DEAD_LETTER_HEADERS.groupId, value: text(h.key.groupId) }, { key: DEAD_LETTER_HEADERS.topic, value: text(h.topic) },
            { key: DEAD_LETTER_HEADERS.partition, value: text(h.key.partition) }, { key: DEAD_LETTER_HEADERS.offset, value: text(r.offset) },
            { key: DEAD_LETTER_HEADERS.reason, value: text(l.reason) }, { key: DEAD_LETTER_HEADERS.deliveryCount, value: text(l.deliveryCount) },
          ];
          out.push(settings.deadLetterCopyRecord
            ? { key: r.key, value: r.value, headers: [...r.headers.map((x) => ({ key: x.key, value: x.value })), ...context], timestamp: r.timestamp }
            : { key: null, value: null, headers: context });
        }
      }
      if (next <= offset) break;
      offset = next;
    }
    if (out.length === 0) return;
    const code = await this.deps.deadLetters.write(settings.deadLetterTopic, h.key.partition, out);
    if (code === ErrorCode.NONE) { this.stats.deadLettersWritten += out.length; return; }
    this.stats.deadLetterFailures += out.length;
    const why = code === ErrorCode.TOPIC_AUTHORIZATION_FAILED ? ': the topic does not set errors.deadletterqueue.group.enable=true'
      : code === ErrorCode.INVALID_CONFIG ? ': its name does not start with errors.deadletterqueue.topic.name.prefix' : '';
    this.deps.warn(`share-partition ${h.key.groupId}/${h.topic}-${h.key.partition}: ${out.length} dead letter(s) not written to ${settings.deadLetterTopic} (${errorName(code)}${why})`);
  }

  private drop(h: Held): void {
    h.timer?.cancel();
    h.timer = null;
    if (this.held.get(id(h.key)) === h) this.held.delete(id(h.key));
    this.wake(h);
  }

  /**
   * Acquires records of each partition for `memberId`: reads from the first available offset and
   * acquires what it can; when nothing could be acquired anywhere, waits up to `maxWaitMs` for any
   * of the partitions to have something again (an append, a record released by an
   * acknowledgement, a leaving member or an expired lock, room under the in-flight limit) and
   * tries again, until it acquires something or the wait is over. A wake-up that finds nothing
   * (another member took the records first, or only made room) keeps the fetch waiting, as
   * Kafka's DelayedShareFetch stays in its purgatory: answering it empty at once would send the
   * consumer round again while the member whose fetch was parked took every new batch (a
   * librdkafka consumer got none of 200 records that way, issue 34).
   */
  async fetch(groupId: string, memberId: string, partitions: ShareFetchPartition[], o: { maxBytes: number; maxRecords: number; maxWaitMs: number }): Promise<ShareFetchResult[]> {
    this.stats.fetches++;
    const out = await Promise.all(partitions.map((p) => this.fetchOne(groupId, memberId, p, o.maxBytes, o.maxRecords, p.acknowledgements)));
    const nothing = (rs: ShareFetchResult[]) => rs.every((r) => r.errorCode === ErrorCode.NONE && r.acquired.length === 0);
    if (o.maxWaitMs <= 0 || partitions.length === 0 || !nothing(out)) return out;
    const waiter = new ShareFetchWaiter();
    const deadline = this.deps.clock.nowMs() + o.maxWaitMs;
    try {
      for (;;) {
        const remaining = deadline - this.deps.clock.nowMs();
        if (remaining <= 0) return out;
        await this.waitForAny(groupId, partitions, remaining, waiter);
        // The acknowledgements were applied by the first pass; the next ones only acquire.
        const again = await Promise.all(partitions.map((p) => this.fetchOne(groupId, memberId, p, o.maxBytes, o.maxRecords, undefined)));
        if (!nothing(again) || waiter.timedOut) return again.map((r, i) => ({ ...r, acknowledgeErrorCode: out[i]!.acknowledgeErrorCode }));
      }
    } finally {
      waiter.done();
    }
  }

  /**
   * Resolves after `maxWaitMs`, or sooner when one of the share-partitions may have records to
   * acquire. One wait on appends per partition per fetch (the log's fetch wait is not cancelled
   * when something else wakes first), so a fetch woken many times does not pile up waits.
   */
  private async waitForAny(groupId: string, partitions: ShareFetchPartition[], maxWaitMs: number, waiter: ShareFetchWaiter): Promise<void> {
    const held = (await Promise.all(partitions.map((p) => this.get(groupId, p)))).filter((h): h is Held => typeof h !== 'number');
    const woken = waiter.arm();
    const timer = this.deps.scheduler.schedule(maxWaitMs, () => waiter.timeout());
    for (const h of held) {
      h.wakers.add(waiter.wake);
      if (h.sp.canAcquire() && !waiter.waitingOnAppends.has(h)) {
        waiter.waitingOnAppends.add(h);
        const appended = () => { waiter.waitingOnAppends.delete(h); waiter.wake(); };
        void this.deps.log.read(h.topic, h.key.partition, h.sp.nextFetchOffset(), 1, this.deps.settings(groupId).isolationLevel, maxWaitMs).then(appended, appended);
      }
    }
    await woken;
    timer.cancel();
    for (const h of held) h.wakers.delete(waiter.wake);
  }

  /** Fetches waiting on the share-partition try again: records may be available. */
  private wake(h: Held): void {
    for (const w of h.wakers) w();
    h.wakers.clear();
  }

  /**
   * Applies the partition's piggybacked acknowledgements (if any), then acquires, and writes the
   * share-partition's state once for both: a ShareFetch carrying the previous batch's
   * acknowledgements costs one state write, not two. Records whose acquisition was not written
   * are not handed out (a new leader would not know them), and acknowledgements not written are
   * answered with the write's error.
   */
  private async fetchOne(groupId: string, memberId: string, p: ShareFetchPartition, maxBytes: number, maxRecords: number, acks: AcknowledgementBatch[] | undefined): Promise<ShareFetchResult> {
    const withAcks = acks !== undefined && acks.length > 0;
    const h = await this.get(groupId, p);
    if (typeof h === 'number') return { errorCode: h, records: null, acquired: [], acknowledgeErrorCode: withAcks ? h : null };
    const settings = this.deps.settings(groupId);
    return this.serial(h, async () => {
      let acknowledgeErrorCode: number | null = null;
      let acked = false;
      if (withAcks) {
        this.stats.acknowledgements++;
        acknowledgeErrorCode = h.sp.acknowledge(memberId, acks);
        acked = acknowledgeErrorCode === ErrorCode.NONE;
      }
      let records: Buffer | null = null;
      let acquired: AcquiredRange[] = [];
      let archived = false;
      let errorCode: number = ErrorCode.NONE;
      if (h.sp.canAcquire()) {
        const read = await this.deps.log.read(h.topic, p.partition, h.sp.nextFetchOffset(), readBytes(h, maxBytes, maxRecords), settings.isolationLevel, 0);
        if (read.errorCode !== ErrorCode.NONE) errorCode = read.errorCode;
        else if (read.records !== null) {
          const { spans, archive } = batchSpans(read.records, read.abortedTransactions);
          if (spans.length > 0) h.bytesPerRecord = read.records.length / (spans[spans.length - 1]!.lastOffset - spans[0]!.baseOffset + 1);
          acquired = h.sp.acquire(this.deps.clock.nowMs(), memberId, spans, maxRecords, archive);
          // Only archived (aborted, control) records: that progress is state too.
          archived = archive.length > 0;
          if (acquired.length > 0) records = sliceToAcquired(read.records, acquired);
        }
      }
      if (!acked && acquired.length === 0 && !archived) return { errorCode, records: null, acquired: [], acknowledgeErrorCode };
      const code = await this.persist(h);
      if (acked) {
        for (const b of acks!) this.stats.recordsAcknowledged += b.lastOffset - b.firstOffset + 1;
        acknowledgeErrorCode = code;
        // A release makes records available, an accept or reject may make room under the in-flight limit.
        this.wake(h);
      }
      if (code !== ErrorCode.NONE) {
        const refused = STALE.has(code) ? ErrorCode.NOT_LEADER_OR_FOLLOWER : code;
        return { errorCode: acquired.length > 0 ? refused : errorCode, records: null, acquired: [], acknowledgeErrorCode };
      }
      for (const r of acquired) this.stats.recordsAcquired += r.lastOffset - r.firstOffset + 1;
      return { errorCode, records, acquired, acknowledgeErrorCode };
    });
  }

  /** A member's acknowledgements for one partition; the error code (INVALID_RECORD_STATE, ...). */
  async acknowledge(groupId: string, memberId: string, p: ShareFetchPartition, batches: AcknowledgementBatch[]): Promise<number> {
    const h = await this.get(groupId, p);
    if (typeof h === 'number') return h;
    this.stats.acknowledgements++;
    return this.serial(h, async () => {
      const code = h.sp.acknowledge(memberId, batches);
      if (code !== ErrorCode.NONE) return code;
      for (const b of batches) this.stats.recordsAcknowledged += b.lastOffset - b.firstOffset + 1;
      const written = await this.persist(h);
      // A release makes records available, an accept or reject may make room under the in-flight limit.
      this.wake(h);
      return written;
    });
  }

  /** The member's share session ended: what it holds on these partitions is released now, not at lock expiry. */
  async releaseMember(groupId: string, memberId: string, partitions: ShareFetchPartition[]): Promise<void> {
    await Promise.all(partitions.map(async (p) => {
      const h = this.held.get(id({ groupId, topicId: p.topicId, partition: p.partition }));
      if (!h) return;
      await this.serial(h, async () => {
        if (h.sp.releaseMember(memberId) === 0) return;
        await this.persist(h);
        this.wake(h);
      });
    }));
  }

  /** The record lock duration a group's members are told (ShareFetch AcquisitionLockTimeoutMs). */
  lockDurationMs(groupId: string): number { return this.deps.settings(groupId).recordLockDurationMs; }

  /** Records acquired now, over every share-partition held here (for /metrics). */
  acquiredRecords(): number {
    let n = 0;
    for (const h of this.held.values()) n += h.sp.acquiredRecords();
    return n;
  }

  /**
   * Per share-partition held here, for /metrics: the start offset, the records in flight and
   * acquired, and the lag (records up to `highWatermark` not yet acknowledged or archived).
   */
  partitionStats(highWatermark: (topic: string, partition: number) => number | null): { groupId: string; topic: string; partition: number; startOffset: number; inFlight: number; acquired: number; lag: number | null }[] {
    return [...this.held.values()].map((h) => {
      const hw = highWatermark(h.topic, h.key.partition);
      return {
        groupId: h.key.groupId, topic: h.topic, partition: h.key.partition, startOffset: h.sp.startOffset, inFlight: h.sp.inFlightRecords, acquired: h.sp.acquiredRecords(),
        lag: hw === null ? null : Math.max(0, hw - h.sp.startOffset - h.sp.doneRecords()),
      };
    });
  }

  /** The share-partitions held here, for describing a group's start offsets. */
  startOffsets(groupId: string): { topicId: string; partition: number; startOffset: number; inFlight: number }[] {
    return [...this.held.values()].filter((h) => h.key.groupId === groupId)
      .map((h) => ({ topicId: h.key.topicId, partition: h.key.partition, startOffset: h.sp.startOffset, inFlight: h.sp.inFlightRecords }));
  }

  private rescheduleLockTimer(h: Held): void {
    const at = h.sp.nextLockDeadlineMs();
    if (at === h.timerAtMs) return;
    h.timer?.cancel();
    h.timer = null;
    h.timerAtMs = at;
    if (at === null) return;
    h.timer = this.deps.scheduler.schedule(Math.max(0, at - this.deps.clock.nowMs()), () => {
      h.timer = null;
      h.timerAtMs = null;
      if (this.held.get(id(h.key)) !== h) return;
      void this.serial(h, async () => {
        const n = h.sp.expireLocks(this.deps.clock.nowMs());
        this.stats.lockTimeouts += n;
        if (n === 0) { this.rescheduleLockTimer(h); return; }
        await this.persist(h);
        this.wake(h);
      });
    });
  }

  close(): void {
    for (const h of this.held.values()) h.timer?.cancel();
    this.held.clear();
  }
}

/**
 * The batches of a read as offset spans, and what is never delivered: control batches (markers)
 * and, under read_committed, the data batches of aborted transactions (from each aborted
 * transaction's first offset to its ABORT marker), as Kafka's consumers skip them.
 */
export function batchSpans(records: Buffer, aborted: readonly { producerId: number; firstOffset: number }[]): { spans: BatchSpan[]; archive: BatchSpan[] } {
  const spans: BatchSpan[] = [];
  const archive: BatchSpan[] = [];
  const open = new Map<number, number>(); // producer id → first offset of its aborted transaction, while it is open
  const pending = [...aborted].sort((a, b) => a.firstOffset - b.firstOffset);
  for (const b of iterateBatches(records)) {
    const span = { baseOffset: b.baseOffset, lastOffset: b.lastOffset };
    spans.push(span);
    while (pending.length > 0 && pending[0]!.firstOffset <= span.lastOffset) { const t = pending.shift()!; open.set(t.producerId, t.firstOffset); }
    if (b.isControl) {
      archive.push(span);
      open.delete(b.producerId);
    } else if (b.isTransactional && open.has(b.producerId)) {
      archive.push(span);
    }
  }
  return { spans, archive };
}

/** The first read of a share-partition, before its record size is known. */
const FIRST_READ_BYTES = 1 << 20;
/** The least a read asks for, whatever the records' size. */
const MIN_READ_BYTES = 64 << 10;

/**
 * How much of the log a fetch reads: enough for `maxRecords` at the size the last read's records
 * had (a quarter more), within the request's MaxBytes. Reading MaxBytes (8 MiB from the CLI's
 * consumer) for 500 records of 1 KiB cost the broker 16 times the reading and copying it needed;
 * the log still returns at least one whole batch.
 */
function readBytes(h: { bytesPerRecord: number | null }, maxBytes: number, maxRecords: number): number {
  const want = h.bytesPerRecord === null ? FIRST_READ_BYTES : Math.ceil(maxRecords * h.bytesPerRecord * 1.25);
  return Math.min(maxBytes, Math.max(MIN_READ_BYTES, want));
}

/**
 * The batches of a read that hold acquired records, from the first to the last: what the
 * consumer is sent (the read may run far past what `maxRecords` let it acquire, and the consumer
 * would only throw those records away).
 */
export function sliceToAcquired(records: Buffer, acquired: readonly AcquiredRange[]): Buffer {
  const first = acquired[0]!.firstOffset;
  const last = acquired[acquired.length - 1]!.lastOffset;
  let start = -1;
  let end = 0;
  for (const b of iterateBatches(records)) {
    if (b.lastOffset < first) continue;
    if (b.baseOffset > last) break;
    if (start < 0) start = b.offset;
    end = b.offset + b.sizeInBytes;
  }
  return start < 0 ? records.subarray(0, 0) : records.subarray(start, end);
}

/**
 * One ShareFetch's wait across wake-ups: the current wake, whether its time ran out, and the
 * partitions it already waits on for appends. A wake while the fetch is trying again (not armed)
 * is kept, so the next wait returns at once instead of missing it.
 */
class ShareFetchWaiter {
  readonly waitingOnAppends = new Set<object>();
  timedOut = false;
  private resolve: (() => void) | null = null;
  private missed = false;
  readonly wake = (): void => {
    const r = this.resolve;
    this.resolve = null;
    if (r) r(); else this.missed = true;
  };
  arm(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.timedOut || this.missed) { this.missed = false; resolve(); } else this.resolve = resolve;
    });
  }
  timeout(): void { this.timedOut = true; this.wake(); }
  done(): void { this.timedOut = true; this.resolve = null; }
}
