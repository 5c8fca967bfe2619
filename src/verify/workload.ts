// The recorded workload of `logline verify`: Jepsen's Kafka workload on our client. Each process
// runs one operation at a time and records its invocation and completion:
//   producers      idempotent, acks=all; each send is one new value to a random partition
//   transactional  consume-transform-produce: poll (read_committed) from the process's positions,
//                  send one to three values, commit the positions with the transaction
//                  (AddOffsetsToTxn, TxnOffsetCommit) and commit it, or abort a fifth of them
//                  (then seek back to the group's committed offsets: an `assign`)
//   consumers      one group's members by assignment: each reads its partitions from the group's
//                  committed offsets, commits as it goes, and now and then is given another set of
//                  partitions (a rebalance done by hand; Kafka's simple consumer groups: assign and
//                  commit, no JoinGroup membership)
// then a final read of every partition from the start to its last stable offset. Every loop is
// bounded by the run's operation count and deadline.
import {
  Cluster, ClientError, ConsumerGroupMember, KafkaError, Outcome, Producer, commitPositions, committedPositions, fetchCommitted,
  type ClusterClientOptions, type FetchedPartition,
} from '../client/index.js';
import { ApiKey, ErrorCode } from '../protocol/index.js';
import { Prng, assert, limits } from '../util/index.js';
import { HistoryRecorder, partitionOf, type Op, type PartitionRead, type Send } from './check/history.js';

export interface WorkloadOptions {
  client: ClusterClientOptions;
  topic: string;
  partitions: number;
  /** -1: the cluster's default. */
  replicationFactor: number;
  producers: number;
  txnProducers: number;
  consumers: number;
  /**
   * How the consumers share the topic: `assign` (they take partitions by hand and share a group's
   * committed offsets) or `group` (members of a KIP-848 consumer group: the coordinator assigns
   * the partitions and moves them in rebalances, and each new owner resumes at the committed offset).
   */
  consumerMode: 'assign' | 'group';
  /** Stop invoking operations after this many (the final read is extra). */
  opsMax: number;
  durationMs: number;
  /** Share of transactions the workload aborts on purpose. */
  abortRatio: number;
  seed: number;
  /** Per-request timeout of the clients: a paused broker must not hold an operation long. */
  requestTimeoutMs: number;
  /** How long one send or transaction may retry before it completes as info or fail. */
  operationTimeoutMs: number;
  /** The final read waits at most this long for each partition's last stable offset to reach its high watermark. */
  finalReadTimeoutMs: number;
}

export const WORKLOAD_DEFAULTS = {
  partitions: 3, replicationFactor: -1, producers: 2, txnProducers: 1, consumers: 2, consumerMode: 'assign', opsMax: 400, durationMs: 20_000,
  abortRatio: 0.2, requestTimeoutMs: 5000, operationTimeoutMs: 10_000, finalReadTimeoutMs: 60_000,
} satisfies Partial<WorkloadOptions>;

const FINAL_PROCESS = -2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The shared budget: operations left and the deadline. */
class Budget {
  private started = 0;
  private stoppedEarly = false;
  constructor(private readonly opsMax: number, private readonly deadline: number) {}
  take(): boolean {
    if (this.stoppedEarly || this.started >= this.opsMax || Date.now() >= this.deadline) return false;
    this.started++;
    return true;
  }
  stop(): void { this.stoppedEarly = true; }
  get done(): boolean { return this.stoppedEarly || this.started >= this.opsMax || Date.now() >= this.deadline; }
}

function validate(o: WorkloadOptions): void {
  const count = (name: string, n: number, min: number, max: number) => assert(Number.isInteger(n) && n >= min && n <= max, `${name}: ${n} is not in ${min}..${max}`);
  count('partitions', o.partitions, 1, 1000);
  count('producers', o.producers, 0, limits.verifyProcessesMax);
  count('transactional producers', o.txnProducers, 0, limits.verifyProcessesMax);
  count('consumers', o.consumers, 0, limits.verifyProcessesMax);
  count('operations', o.opsMax, 1, limits.verifyOpsMax);
  count('duration', o.durationMs, 1, limits.verifyDurationMsMax);
  assert(o.producers + o.txnProducers > 0, 'a workload needs a producer');
  assert(o.consumerMode === 'assign' || o.consumerMode === 'group', `consumers: assign or group, not ${String(o.consumerMode)}`);
}

/** Creates the run's topic (min.insync.replicas 2 when it has three replicas or more, as Jepsen's Kafka tests run) and waits for its leaders. */
export async function createTopic(o: WorkloadOptions): Promise<void> {
  const cluster = new Cluster({ ...o.client, requestTimeoutMs: o.requestTimeoutMs });
  try {
    await cluster.client.metadata([]);
    const brokers = cluster.client.brokers.size;
    const replicas = o.replicationFactor > 0 ? o.replicationFactor : Math.min(3, brokers);
    const configs = replicas >= 3 ? [{ name: 'min.insync.replicas', value: '2' }] : [];
    const r = await cluster.client.admin(ApiKey.CreateTopics, { topics: [{ name: o.topic, numPartitions: o.partitions, replicationFactor: replicas, assignments: [], configs }], timeoutMs: 30_000, validateOnly: false }, 7);
    const t = r.topics[0];
    if (t.errorCode !== 0) throw new KafkaError(t.errorCode, t.errorMessage ?? `create ${o.topic}`);
    await cluster.client.retrying(() => cluster.client.topic(o.topic));
  } finally {
    cluster.close();
  }
}

/** A send's record as the producer takes it. */
const recordOf = (s: Send) => ({ key: s.key === null ? null : Buffer.from(s.key), value: Buffer.from(s.value) });

/** The workload's fetch of one topic, with each record as the history keeps it: [offset, value]. */
async function fetchOne(cluster: Cluster, topic: string, positions: Map<number, number>, maxWaitMs: number): Promise<(Omit<FetchedPartition, 'records'> & { records: [number, string][] })[]> {
  const fetched = await fetchCommitted(cluster, new Map([[topic, positions]]), { maxWaitMs });
  return fetched.map((f) => ({ ...f, records: f.records.map((r): [number, string] => [r.offset, r.value?.toString() ?? '']) }));
}

/** Runs the processes until the budget is spent, then the final read; everything lands in `h`. */
export async function runWorkload(o: WorkloadOptions, h: HistoryRecorder, stop: () => boolean = () => false): Promise<void> {
  validate(o);
  const prng = new Prng(o.seed);
  const budget = new Budget(o.opsMax, Date.now() + o.durationMs);
  const values = { next: 0 };
  const clientOptions = { ...o.client, requestTimeoutMs: o.requestTimeoutMs };
  const processes: Promise<void>[] = [];
  let process = 0;
  const guard = (run: (cluster: Cluster) => Promise<void>) => {
    const cluster = new Cluster({ ...clientOptions, clientId: `logline-verify-${process}` });
    processes.push(run(cluster).finally(() => cluster.close()));
  };
  const stopWatch = setInterval(() => { if (stop()) budget.stop(); }, 100);
  try {
    for (let i = 0; i < o.producers; i++) { const p = process++; const seed = prng.nextUint32(); guard((c) => producerProcess(o, h, c, p, budget, values, new Prng(seed))); }
    for (let i = 0; i < o.txnProducers; i++) { const p = process++; const seed = prng.nextUint32(); guard((c) => txnProcess(o, h, c, p, budget, values, new Prng(seed))); }
    for (let i = 0; i < o.consumers; i++) {
      const p = process++;
      const seed = prng.nextUint32();
      guard((c) => o.consumerMode === 'group' ? groupMemberProcess(o, h, c, p, budget, new Prng(seed)) : consumerProcess(o, h, c, p, i, budget, new Prng(seed)));
    }
    await Promise.all(processes);
  } finally {
    clearInterval(stopWatch);
  }
}

async function producerProcess(o: WorkloadOptions, h: HistoryRecorder, cluster: Cluster, process: number, budget: Budget, values: { next: number }, prng: Prng): Promise<void> {
  const producer = new Producer(cluster, { transactionalId: null, transactionTimeoutMs: 60_000, deliveryTimeoutMs: o.operationTimeoutMs });
  while (!budget.done) {
    if (!producer.ready && !(await initialized(producer, o, budget))) continue;
    if (!budget.take()) break;
    const partition = prng.int(o.partitions);
    const send: Send = { f: 'send', partition: partitionOf(o.topic, partition), key: `p${process}`, value: String(values.next++), offset: null };
    const inv = h.invoke(process, 'send', { mops: [send] });
    try {
      const offset = await producer.send(o.topic, partition, [recordOf(send)], Date.now() + o.operationTimeoutMs);
      h.complete(inv, 'ok', { mops: [{ ...send, offset }] });
    } catch (err) {
      const outcome = asOutcome(err);
      h.complete(inv, outcome.definite ? 'fail' : 'info', { mops: [send], error: outcome.message });
      if (outcome.reinit) await producer.init(Date.now() + o.operationTimeoutMs).catch(() => {});
    }
  }
}

/** InitProducerId before the first operation and after a fatal error; false (after a pause) when it did not work yet. */
async function initialized(producer: Producer, o: WorkloadOptions, budget: Budget): Promise<boolean> {
  try {
    await producer.init(Date.now() + o.operationTimeoutMs);
    return true;
  } catch {
    if (!budget.done) await sleep(200);
    return false;
  }
}

/** Errors the clients may throw, as an outcome: anything unexpected is unknown (it may have happened). */
function asOutcome(err: unknown): Outcome {
  if (err instanceof Outcome) return err;
  if (err instanceof KafkaError) return new Outcome(err.message, false, true);
  if (err instanceof ClientError) return new Outcome(err.message, false, true);
  return new Outcome(err instanceof Error ? err.message : String(err), false, true);
}

async function txnProcess(o: WorkloadOptions, h: HistoryRecorder, cluster: Cluster, process: number, budget: Budget, values: { next: number }, prng: Prng): Promise<void> {
  const group = `${o.topic}-txn-${process}`;
  const producer = new Producer(cluster, { transactionalId: `${o.topic}-txn-${process}`, transactionTimeoutMs: Math.max(o.operationTimeoutMs * 2, 10_000), deliveryTimeoutMs: o.operationTimeoutMs });
  const all = Array.from({ length: o.partitions }, (_, p) => p);
  let positions: Map<number, number> | null = null;
  while (!budget.done) {
    if (!producer.ready && !(await initialized(producer, o, budget))) continue;
    if (positions === null) {
      positions = await seekToCommitted(o, h, cluster, process, group, all).catch(() => null);
      if (positions === null) { await sleep(200); continue; }
    }
    if (!budget.take()) break;
    // Distinct partitions: a transaction's records in one partition could be interleaved with
    // other producers' records, which Kafka allows and which would show as write cycles (G0).
    const chosen = shuffled(all, prng).slice(0, 1 + prng.int(Math.min(3, o.partitions)));
    const sends: Send[] = chosen.map((partition) => ({ f: 'send', partition: partitionOf(o.topic, partition), key: `t${process}`, value: String(values.next++), offset: null }));
    const commit = prng.next() >= o.abortRatio;
    const inv = h.invoke(process, 'txn', { mops: [{ f: 'poll', isolation: 'read_committed', reads: [] }, ...sends] });
    const done: Send[] = [];
    const reads: PartitionRead[] = [];
    const deadline = Date.now() + o.operationTimeoutMs;
    const next: Map<number, number> = new Map(positions);
    let commitSent = false;
    const complete = (type: 'ok' | 'fail' | 'info', error?: string) => h.complete(inv, type, {
      mops: [{ f: 'poll', isolation: 'read_committed', reads }, ...done, ...sends.slice(done.length)], ...(error === undefined ? {} : { error }),
    });
    try {
      for (const f of await fetchOne(cluster, o.topic, next, 50)) {
        if (f.records.length > 0) reads.push({ partition: partitionOf(o.topic, f.partition), records: f.records });
        next.set(f.partition, f.next);
      }
      await producer.addPartitions(new Map([[o.topic, sends.map((s) => Number(s.partition.slice(o.topic.length + 1)))]]), deadline);
      for (const s of sends) done.push({ ...s, offset: await producer.send(o.topic, Number(s.partition.slice(o.topic.length + 1)), [recordOf(s)], deadline) });
      if (reads.length > 0) await producer.sendOffsets(group, o.topic, next, deadline);
      commitSent = commit;
      await producer.end(commit, deadline);
      if (commit) { complete('ok'); positions = next; continue; }
      complete('fail', 'aborted by the workload');
    } catch (err) {
      const outcome = asOutcome(err);
      // Without EndTxn(commit) nothing of the transaction can commit: abort it (or fence it with
      // a new epoch, which aborts it) and it failed. After a commit whose answer was lost, only an
      // abort that succeeds proves it did not commit.
      const aborted = await producer.end(false, Date.now() + o.operationTimeoutMs).then(() => true, () => false);
      if (!aborted || outcome.reinit) await producer.init(Date.now() + o.operationTimeoutMs).catch(() => {});
      complete(!commitSent || outcome.definite || aborted ? 'fail' : 'info', outcome.message);
    }
    // After an abort the consumer starts again from the group's committed offsets, as a Kafka consumer seeks.
    positions = null;
  }
}

/** A copy of `xs` in random order (Fisher-Yates). */
function shuffled<T>(xs: readonly T[], prng: Prng): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = prng.int(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The group's committed offsets (0 where none), recorded as an assignment of `partitions`. */
async function seekToCommitted(o: WorkloadOptions, h: HistoryRecorder, cluster: Cluster, process: number, group: string, partitions: number[]): Promise<Map<number, number>> {
  const names = partitions.map((p) => partitionOf(o.topic, p));
  const inv = h.invoke(process, 'assign', { partitions: names });
  try {
    const committed = await committedPositions(cluster, group, o.topic, Date.now() + o.operationTimeoutMs);
    const positions = new Map(partitions.map((p) => [p, committed.get(p) ?? 0]));
    h.complete(inv, 'ok', { partitions: names, positions: Object.fromEntries([...positions].map(([p, offset]) => [partitionOf(o.topic, p), offset])) });
    return positions;
  } catch (err) {
    h.complete(inv, 'fail', { partitions: names, error: asOutcome(err).message });
    throw err;
  }
}

async function consumerProcess(o: WorkloadOptions, h: HistoryRecorder, cluster: Cluster, process: number, member: number, budget: Budget, prng: Prng): Promise<void> {
  const group = `${o.topic}-group`;
  let partitions = Array.from({ length: o.partitions }, (_, p) => p).filter((p) => p % o.consumers === member % o.consumers);
  let positions: Map<number, number> | null = null;
  let polls = 0;
  while (!budget.done) {
    if (partitions.length === 0) partitions = [prng.int(o.partitions)];
    if (positions === null) {
      positions = await seekToCommitted(o, h, cluster, process, group, partitions).catch(() => null);
      if (positions === null) { await sleep(200); continue; }
    }
    if (!budget.take()) break;
    const inv = h.invoke(process, 'poll', { mops: [{ f: 'poll', isolation: 'read_committed', reads: [] }] });
    try {
      const reads: PartitionRead[] = [];
      for (const f of await fetchOne(cluster, o.topic, positions, 100)) {
        if (f.records.length > 0) reads.push({ partition: partitionOf(o.topic, f.partition), records: f.records });
        positions.set(f.partition, f.next);
      }
      h.complete(inv, 'ok', { mops: [{ f: 'poll', isolation: 'read_committed', reads }] });
    } catch (err) {
      h.complete(inv, 'fail', { mops: [{ f: 'poll', isolation: 'read_committed', reads: [] }], error: asOutcome(err).message });
      positions = null; // start again from the committed offsets
      continue;
    }
    if (++polls % 5 === 0) await commitPositions(cluster, group, o.topic, positions, Date.now() + o.operationTimeoutMs).catch(() => {});
    if (prng.next() < 0.05) {
      // A rebalance: commit where this member is, and take another set of partitions.
      await commitPositions(cluster, group, o.topic, positions, Date.now() + o.operationTimeoutMs).catch(() => {});
      partitions = Array.from({ length: o.partitions }, (_, p) => p).filter(() => prng.next() < 0.5);
      positions = null;
    }
  }
  if (positions !== null) await commitPositions(cluster, group, o.topic, positions, Date.now() + o.operationTimeoutMs).catch(() => {});
}

/**
 * A member of the KIP-848 consumer group `<topic>-members`: heartbeats, and on each new assignment
 * commits the positions of the partitions taken away before it lets them go, and resumes the
 * partitions it was given at the group's committed offsets (an `assign` with those `positions`).
 * It polls what it owns, commits every few polls, and now and then leaves and joins again, which
 * makes the group rebalance; faults make more rebalances (a coordinator moves, a member is fenced).
 * Every commit and assignment is recorded with the group, so the checker follows each partition
 * from one owner to the next.
 */
async function groupMemberProcess(o: WorkloadOptions, h: HistoryRecorder, cluster: Cluster, process: number, budget: Budget, prng: Prng): Promise<void> {
  const group = `${o.topic}-members`;
  const member = new ConsumerGroupMember(cluster, group, [o.topic], { rebalanceTimeoutMs: Math.max(30_000, o.operationTimeoutMs * 3) });
  const positions = new Map<number, number>(); // what the member owns → its next offset
  let target: number[] | null = null; // the coordinator's last assignment, until taken on
  let nextHeartbeat = 0;
  let polls = 0;
  const names = (ps: Iterable<number>) => [...ps].sort((a, b) => a - b).map((p) => partitionOf(o.topic, p));
  const commit = async (which: ReadonlyMap<number, number>) => {
    if (which.size === 0) return;
    const committed = Object.fromEntries([...which].map(([p, offset]) => [partitionOf(o.topic, p), offset]));
    const inv = h.invoke(process, 'commit', { group, positions: committed });
    try {
      await member.commit(o.topic, which, Date.now() + o.operationTimeoutMs);
      h.complete(inv, 'ok', { group, positions: committed });
    } catch (err) {
      const outcome = asOutcome(err);
      h.complete(inv, outcome.definite ? 'fail' : 'info', { group, positions: committed, error: outcome.message });
    }
  };
  /** Takes `target` on: revoked partitions committed (unless the member was fenced) and dropped, new ones resumed at the committed offsets. */
  const reconcile = async (assigned: number[], fenced: boolean) => {
    const keep = new Set(assigned);
    const revoked = new Map([...positions].filter(([p]) => !keep.has(p)));
    if (!fenced) await commit(revoked);
    for (const p of revoked.keys()) positions.delete(p);
    const added = assigned.filter((p) => !positions.has(p));
    const inv = h.invoke(process, 'assign', { group, partitions: names(assigned) });
    try {
      const committed = added.length > 0 ? await committedPositions(cluster, group, o.topic, Date.now() + o.operationTimeoutMs) : new Map<number, number>();
      for (const p of added) positions.set(p, committed.get(p) ?? 0);
      h.complete(inv, 'ok', { group, partitions: names(assigned), positions: Object.fromEntries(added.map((p) => [partitionOf(o.topic, p), positions.get(p)!])) });
    } catch (err) {
      // Where to resume is unknown: the new partitions wait for the next try; the rest go on.
      h.complete(inv, 'fail', { group, partitions: names(positions.keys()), error: asOutcome(err).message });
    }
    member.reconciled(new Map([[o.topic, [...positions.keys()]]]));
    nextHeartbeat = 0; // tell the coordinator at once
  };
  const owns = (ps: number[]) => ps.length === positions.size && ps.every((p) => positions.has(p));
  while (!budget.done) {
    if (Date.now() >= nextHeartbeat) {
      try {
        const r = await member.heartbeat(Date.now() + o.operationTimeoutMs);
        if (r.rejoined) await reconcile([], true);
        if (r.assignment !== null) target = r.assignment.get(o.topic) ?? [];
        nextHeartbeat = Date.now() + Math.min(member.intervalMs, 1000);
      } catch {
        nextHeartbeat = Date.now() + 500;
      }
    }
    if (target !== null && !owns(target)) await reconcile(target, false);
    if (positions.size === 0) { await sleep(100); continue; }
    if (!budget.take()) break;
    const inv = h.invoke(process, 'poll', { mops: [{ f: 'poll', isolation: 'read_committed', reads: [] }] });
    try {
      const reads: PartitionRead[] = [];
      for (const f of await fetchOne(cluster, o.topic, positions, 100)) {
        if (!positions.has(f.partition)) continue;
        if (f.records.length > 0) reads.push({ partition: partitionOf(o.topic, f.partition), records: f.records });
        positions.set(f.partition, f.next);
      }
      h.complete(inv, 'ok', { mops: [{ f: 'poll', isolation: 'read_committed', reads }] });
    } catch (err) {
      // The positions stay: a consumer fetches again from where it was.
      h.complete(inv, 'fail', { mops: [{ f: 'poll', isolation: 'read_committed', reads: [] }], error: asOutcome(err).message });
      await sleep(100);
      continue;
    }
    if (++polls % 5 === 0) await commit(new Map(positions));
    if (prng.next() < 0.03) {
      // Leave and join again: the group rebalances around this member.
      await commit(new Map(positions));
      positions.clear();
      h.complete(h.invoke(process, 'assign', { group, partitions: [] }), 'ok', { group, partitions: [], positions: {} });
      await member.leave(Date.now() + o.operationTimeoutMs);
      target = null;
      nextHeartbeat = 0;
    }
  }
  await commit(new Map(positions));
  await member.leave(Date.now() + o.operationTimeoutMs);
}

/**
 * Reads every partition from offset 0 up to its last stable offset, once that has reached the
 * high watermark (no transaction left open) or `finalReadTimeoutMs` has passed; each read says how
 * far it got (`endOffset`), which is what lets the checker call an unread acknowledged send lost.
 */
export async function finalRead(o: WorkloadOptions, h: HistoryRecorder): Promise<Op> {
  const cluster = new Cluster({ ...o.client, requestTimeoutMs: o.requestTimeoutMs, clientId: 'logline-verify-final' });
  const inv = h.invoke(FINAL_PROCESS, 'final', { mops: [{ f: 'poll', isolation: 'read_committed', reads: [] }] });
  const reads = new Map<number, PartitionRead>(Array.from({ length: o.partitions }, (_, p) => [p, { partition: partitionOf(o.topic, p), records: [] }]));
  const positions = new Map<number, number>(Array.from({ length: o.partitions }, (_, p) => [p, 0]));
  const deadline = Date.now() + o.finalReadTimeoutMs;
  try {
    while (positions.size > 0 && Date.now() < deadline) {
      const fetched = await fetchOne(cluster, o.topic, positions, 100).catch((err) => { if (err instanceof KafkaError && err.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) throw err; return []; });
      for (const f of fetched) {
        const read = reads.get(f.partition)!;
        read.records.push(...f.records);
        positions.set(f.partition, f.next);
        // Done with a partition once it read up to a last stable offset that equals the high watermark.
        if (f.records.length === 0 && f.next >= f.lastStableOffset && f.lastStableOffset === f.highWatermark) {
          read.endOffset = f.lastStableOffset;
          positions.delete(f.partition);
        }
      }
      if (fetched.length === 0) await sleep(200);
    }
    const unfinished = [...positions.keys()];
    const mops = [{ f: 'poll' as const, isolation: 'read_committed' as const, reads: [...reads.values()] }];
    return unfinished.length === 0 ? h.complete(inv, 'ok', { mops })
      : h.complete(inv, 'info', { mops, error: `partitions ${unfinished.join(', ')} not read to their end in ${o.finalReadTimeoutMs} ms` });
  } catch (err) {
    return h.complete(inv, 'info', { mops: [{ f: 'poll', isolation: 'read_committed', reads: [...reads.values()] }], error: err instanceof Error ? err.message : String(err) });
  } finally {
    cluster.close();
  }
}

