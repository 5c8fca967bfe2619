// The registry as one node runs it: a RegistryState replayed from this node's replica of
// `_schemas`-0 up to its high watermark (every node reads from its own copy), and the single
// writer. The writer is the node leading `_schemas`-0 (see README.md for why): it runs operations
// one at a time, each against a state that has replayed the whole of its log, appends the records
// with acks=all, and answers once its own replay has passed them (read-your-writes). Other nodes
// forward writes to it over REST and answer once their replay reaches the offset it reports.
//
// The only asynchronous code of the registry: the tail loop and the write queue. The state and the
// operations stay pure.
import { buildRecordBatchSync, decompressBatchBody, iterateBatches, iterateRecords } from '../records/index.js';
import type { Clock, Logger } from '../util/index.js';
import { registryErrors as E, RegistryError } from './errors.js';
import { decodeRegistryRecord, encodeRegistryRecord } from './records.js';
import { RegistryState, type OperationResult } from './state.js';

/** What the registry needs of `_schemas`-0 on this node (the node fills it in over its replica manager). */
export interface SchemasLog {
  /** This node holds a replica of `_schemas`-0 (false also while the topic does not exist). */
  hasReplica(): boolean;
  isLeader(): boolean;
  /** The partition leader's node id; -1 when there is none (or no topic yet). */
  leaderId(): number;
  highWatermark(): number;
  logEndOffset(): number;
  logStartOffset(): number;
  /** Where `epoch` ends in this replica's leader-epoch cache (the log end offset for the latest; -1 when it has no epoch at or below it). */
  endOffsetForEpoch(epoch: number): number;
  /** Whole batches from `offset`, none at or past `maxOffset`. */
  read(offset: number, maxOffset: number): Promise<Buffer>;
  /** Appends with acks=all: resolves once committed, with the batch's base offset, or an error code. */
  append(batch: Buffer): Promise<{ errorCode: number; baseOffset: number }>;
  /** Creates `_schemas` when it does not exist (compacted, one partition); resolves with 0 or an error code. */
  ensureTopic(): Promise<number>;
}

export interface RegistryServiceOptions {
  log: SchemasLog;
  clock: Clock;
  logger: Logger;
  /** How often the tail loop looks for new records when nothing woke it. */
  pollMs?: number;
  /** How long a write waits for the topic, the writer to catch up, or a forwarded write to be replayed here. */
  writeTimeoutMs?: number;
}

export class RegistryService {
  readonly state = new RegistryState();
  /** The next offset to replay. */
  private nextOffset = 0;
  private polling: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private pollAgain = false;
  /** The leader epoch of the last batch replayed (-1: none yet, or unknown). */
  private lastEpoch = -1;
  /** The furthest offset a writer answered with, and the leader epoch of the batch below it (see replayCommitted). */
  private confirmed: { offset: number; epoch: number } | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly waiters = new Set<{ offset: number; resolve: () => void }>();
  private readonly pollMs: number;
  readonly writeTimeoutMs: number;

  constructor(private readonly options: RegistryServiceOptions) {
    this.pollMs = options.pollMs ?? 20;
    this.writeTimeoutMs = options.writeTimeoutMs ?? 30_000;
  }

  start(): void {
    const loop = () => {
      if (this.closed) return;
      void this.poll().finally(() => {
        if (!this.closed) { this.timer = setTimeout(loop, this.pollMs); this.timer.unref(); }
      });
    };
    loop();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.waiters) w.resolve();
    this.waiters.clear();
  }

  /** Offsets below this have been replayed into `state`. */
  get replayedOffset(): number { return this.nextOffset; }

  isWriter(): boolean { return this.options.log.isLeader(); }
  /** This node replays its own copy of `_schemas` (or there is none anywhere yet, and the empty state is right). */
  hasLocalCopy(): boolean { return this.options.log.hasReplica() || this.options.log.leaderId() < 0; }
  /** This node replays a replica of its own (a node outside `_schemas`' replicas reads through the writer). */
  replaysLocally(): boolean { return this.options.log.hasReplica(); }
  writerId(): number { return this.options.log.leaderId(); }

  /**
   * Replays what this node's replica has committed since the last poll, one poll at a time; a
   * call while one runs makes it go round once more (what woke the caller may have come after
   * that poll read the high watermark), so a waiter never sits out a poll interval.
   */
  poll(): Promise<void> {
    if (this.polling !== null) { this.pollAgain = true; return this.polling; }
    this.polling = (async () => {
      do {
        this.pollAgain = false;
        await this.replayCommitted().catch((e: unknown) => {
          this.options.logger.warn(`replaying _schemas: ${e instanceof Error ? e.message : String(e)}`);
        });
      } while (this.pollAgain && !this.closed);
      // In the same turn as the last check of pollAgain: a call from here on starts a new poll.
      this.polling = null;
    })();
    return this.polling;
  }

  private async replayCommitted(): Promise<void> {
    const log = this.options.log;
    if (!log.hasReplica()) return;
    // A compacted log that lost its head (never by compaction itself) starts over from its start.
    if (this.nextOffset < log.logStartOffset()) { this.nextOffset = log.logStartOffset(); this.lastEpoch = -1; }
    // A replica cut below what was replayed and written on by a new leader (only an unclean leader
    // election takes committed records away): the epoch of the last batch replayed now ends before
    // it, as a consumer detects log truncation (KIP-320). What was replayed may differ from what
    // the log holds there now, so the state is rebuilt from the start.
    const epochEnd = this.lastEpoch >= 0 ? log.endOffsetForEpoch(this.lastEpoch) : this.nextOffset;
    if (epochEnd < this.nextOffset) {
      this.options.logger.warn(`_schemas diverged at ${epochEnd}, below the replayed offset ${this.nextOffset} (leader epoch ${this.lastEpoch}): replaying it again from the start`);
      this.state.clear();
      this.nextOffset = log.logStartOffset();
      this.lastEpoch = -1;
    }
    for (let hw = log.highWatermark(); this.nextOffset < hw && !this.closed; hw = log.highWatermark()) {
      const bytes = await log.read(this.nextOffset, hw);
      if (bytes.length === 0) break;
      await this.replayBatches(bytes);
    }
    // Past the high watermark this replica knows (it learns the leader's with its next fetch
    // answer, which the leader may park for replica.fetch.wait.max.ms): up to the offset the
    // writer said is committed, if this replica's batch just below it is the writer's own, i.e.
    // the same offset and leader epoch. One leader per epoch writes each offset once, and a
    // follower appends only what continues the leader's log, so that batch and all before it are
    // the committed log; otherwise (a stale suffix of an older epoch, or not fetched yet) the
    // high watermark will bring them.
    const c = this.confirmed;
    if (c !== null && c.offset > this.nextOffset && c.offset <= log.logEndOffset() && !this.closed) {
      const bytes = await log.read(this.nextOffset, c.offset);
      let last: { lastOffset: number; partitionLeaderEpoch: number } | null = null;
      for (const view of iterateBatches(bytes)) last = { lastOffset: view.lastOffset, partitionLeaderEpoch: view.partitionLeaderEpoch };
      if (last !== null && last.lastOffset === c.offset - 1 && last.partitionLeaderEpoch === c.epoch) await this.replayBatches(bytes);
    }
    for (const w of this.waiters) if (this.nextOffset >= w.offset) { this.waiters.delete(w); w.resolve(); }
  }

  private async replayBatches(bytes: Buffer): Promise<void> {
    for (const view of iterateBatches(bytes)) {
      if (view.lastOffset < this.nextOffset) continue;
      if (!view.isControl) {
        const body = await decompressBatchBody(view);
        for (const rec of iterateRecords(view, body)) {
          if (rec.key === null || view.baseOffset + rec.offsetDelta < this.nextOffset) continue;
          const record = decodeRegistryRecord(rec.key, rec.value);
          if (record !== null) this.state.replay(record);
        }
      }
      this.nextOffset = view.lastOffset + 1;
      this.lastEpoch = view.partitionLeaderEpoch;
    }
  }

  /** Where this node's replay stands: the next offset, and the leader epoch of the batch just below it (-1: unknown). */
  get replayedPosition(): { offset: number; epoch: number } { return { offset: this.nextOffset, epoch: this.lastEpoch }; }

  /**
   * Resolves once this node has replayed every offset below `offset`; false on timeout. `epoch`:
   * the writer's word that everything below `offset` is committed, the batch below it written in
   * that leader epoch (so this node may replay it from its replica before its high watermark says so).
   */
  async waitForOffset(offset: number, timeoutMs = this.writeTimeoutMs, epoch?: number): Promise<boolean> {
    if (this.nextOffset >= offset) return true;
    if (epoch !== undefined && epoch >= 0 && offset > (this.confirmed?.offset ?? -1)) this.confirmed = { offset, epoch };
    let timer: NodeJS.Timeout | undefined;
    const reached = new Promise<boolean>((resolve) => this.waiters.add({ offset, resolve: () => resolve(true) }));
    void this.poll();
    const ok = await Promise.race([reached, new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), timeoutMs); })]);
    clearTimeout(timer);
    return ok && this.nextOffset >= offset;
  }

  /** Waits until `_schemas` exists and has a leader somewhere (the first write creates it). */
  async awaitWriter(): Promise<number> {
    const deadline = this.options.clock.nowMs() + this.writeTimeoutMs;
    let created = false;
    while (this.options.clock.nowMs() < deadline && !this.closed) {
      const leader = this.options.log.leaderId();
      if (leader >= 0) return leader;
      if (!created) {
        const code = await this.options.log.ensureTopic();
        created = code === 0;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw E.timeout('Timed out waiting for the _schemas topic to have a leader');
  }

  /**
   * Runs `op` as the writer: after every record this leader holds is committed and replayed, so the
   * operation sees the whole history; its records are appended (acks=all) and replayed before the
   * response is returned with the offset that follows them (and the leader epoch of the batch
   * below that offset, which lets a forwarding node replay them before its high watermark moves).
   */
  write<T>(op: (state: RegistryState) => OperationResult<T>): Promise<{ response: T; offset: number; epoch: number }> {
    const run = async () => {
      const log = this.options.log;
      if (!log.isLeader()) throw E.forwardingError('this node no longer leads _schemas');
      const deadline = this.options.clock.nowMs() + this.writeTimeoutMs;
      while (!(log.highWatermark() >= log.logEndOffset() && this.nextOffset >= log.logEndOffset())) {
        if (this.options.clock.nowMs() > deadline) throw E.timeout('Timed out waiting for the writer to replay _schemas');
        await this.poll();
        await new Promise((r) => setTimeout(r, 5));
      }
      const { records, response } = op(this.state);
      if (records.length === 0) return { response, ...this.replayedPosition };
      const batch = buildRecordBatchSync({ records: records.map((r) => encodeRegistryRecord(r)), baseTimestamp: this.options.clock.nowMs() });
      const { errorCode, baseOffset } = await log.append(batch);
      if (errorCode !== 0) throw E.storeError(`append to _schemas failed with error code ${errorCode}`);
      const end = baseOffset + records.length;
      if (!(await this.waitForOffset(end))) throw E.timeout('Timed out waiting for the write to be replayed');
      return { response, ...this.replayedPosition };
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => {});
    return next;
  }
}

export { RegistryError };
