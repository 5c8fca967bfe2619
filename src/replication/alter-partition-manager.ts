// Kafka's AlterPartitionManager: sends the ISR changes partitions propose to the active controller
// as AlterPartition (key 56, v3: topic ids, broker epochs), one request in flight at a time,
// proposals made meanwhile batched into the next. A request that gets no answer, or a top-level
// error (NOT_CONTROLLER while the quorum elects, ...), is sent again after a backoff, as is a
// partition answered with an error Kafka retries; a proposal the partition has since dropped (a
// metadata delta answered it) is not. The partition decides what an answer means.
import { ErrorCode, type AlterPartitionRequest, type AlterPartitionResponse } from '../protocol/index.js';
import type { IsrChangeResult, IsrProposal, Partition } from './partition.js';
import type { Scheduler } from './purgatory.js';

/** Where partitions send ISR changes. `done` gets the controller's answer for the proposal. */
export interface IsrChangeChannel {
  submit(proposal: IsrProposal, done: (r: IsrChangeResult) => void): void;
}

/** No controller to ask: proposals stay in flight (tests of a leader alone, single-replica brokers). */
export const NO_ISR_CHANGES: IsrChangeChannel = Object.freeze({ submit(): void {} });

/** Per-partition errors the partition handles itself (Kafka's Partition.handleAlterPartitionError); others are retried. */
const ANSWERED_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.OPERATION_NOT_ATTEMPTED, ErrorCode.INELIGIBLE_REPLICA, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_ID,
  ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.INVALID_UPDATE_VERSION, ErrorCode.NEW_LEADER_ELECTED, ErrorCode.INVALID_REQUEST,
]);

export interface AlterPartitionManagerOptions {
  readonly brokerId: number;
  /** This broker's registration epoch (the local member of every proposed ISR carries it). */
  readonly brokerEpoch: () => bigint;
  readonly send: (request: AlterPartitionRequest) => Promise<AlterPartitionResponse>;
  readonly scheduler: Scheduler;
  readonly retryBackoffMs: number;
  readonly log?: (line: string) => void;
}

interface Submitted { proposal: IsrProposal; done: (r: IsrChangeResult) => void }

export class AlterPartitionManager implements IsrChangeChannel {
  private readonly queued = new Map<Partition, Submitted>();
  private inFlight = false;
  private closed = false;
  private readonly timers = new Set<{ cancel(): void }>();

  constructor(private readonly o: AlterPartitionManagerOptions) {}

  submit(proposal: IsrProposal, done: (r: IsrChangeResult) => void): void {
    this.queued.set(proposal.partition, { proposal, done });
    this.maybeSend();
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) t.cancel();
    this.timers.clear();
    this.queued.clear();
  }

  private maybeSend(): void {
    if (this.inFlight || this.closed || this.queued.size === 0) return;
    const batch = [...this.queued.values()];
    this.queued.clear();
    this.inFlight = true;
    this.o.send(this.request(batch)).then((response) => this.handle(batch, response), (e: unknown) => {
      this.o.log?.(`AlterPartition failed: ${e instanceof Error ? e.message : String(e)}; retrying`);
      this.retryLater(batch);
    });
  }

  private request(batch: readonly Submitted[]): AlterPartitionRequest {
    const epoch = this.o.brokerEpoch();
    const topics = new Map<string, AlterPartitionRequest['topics'][number]>();
    for (const { proposal: p } of batch) {
      const topicId = p.partition.topicId;
      let t = topics.get(topicId);
      if (t === undefined) topics.set(topicId, t = { topicName: p.partition.topic, topicId, partitions: [] });
      const newIsrWithEpochs = p.newIsr.map((m) => ({ brokerId: m.brokerId, brokerEpoch: m.brokerId === this.o.brokerId ? epoch : m.brokerEpoch }));
      t.partitions.push({
        partitionIndex: p.partition.index, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch, leaderRecoveryState: 0,
        newIsr: newIsrWithEpochs.map((m) => m.brokerId), newIsrWithEpochs,
      });
    }
    return { brokerId: this.o.brokerId, brokerEpoch: epoch, topics: [...topics.values()] };
  }

  private handle(batch: readonly Submitted[], response: AlterPartitionResponse): void {
    this.inFlight = false;
    if (response.errorCode !== ErrorCode.NONE) {
      this.o.log?.(`AlterPartition answered error ${response.errorCode}; retrying`);
      this.retryLater(batch);
      return;
    }
    const results = new Map<string, IsrChangeResult>();
    for (const t of response.topics) for (const p of t.partitions) results.set(`${t.topicId}:${p.partitionIndex}`, p);
    const again: Submitted[] = [];
    for (const s of batch) {
      const r = results.get(`${s.proposal.partition.topicId}:${s.proposal.partition.index}`);
      if (r === undefined || (r.errorCode !== ErrorCode.NONE && !ANSWERED_ERRORS.has(r.errorCode))) again.push(s);
      else s.done(r);
    }
    if (again.length > 0) this.retryLater(again);
    this.maybeSend();
  }

  private retryLater(batch: readonly Submitted[]): void {
    this.inFlight = false;
    if (this.closed) return;
    const timer = this.o.scheduler.schedule(this.o.retryBackoffMs, () => {
      this.timers.delete(timer);
      for (const s of batch) {
        const p = s.proposal.partition;
        // Superseded (the metadata answered it, or a newer proposal is queued): not sent again.
        if (p.pendingIsrChange === s.proposal.pending && !this.queued.has(p)) this.queued.set(p, s);
      }
      this.maybeSend();
    });
    this.timers.add(timer);
    this.maybeSend();
  }
}
