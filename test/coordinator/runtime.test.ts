// The coordinator runtime over in-memory partitions, with a manual clock and scheduler: the
// transaction coordinator's commit path (Prepare record, markers, CompleteCommit; a marker sender
// that fails once; a new coordinator finishing a commit left half done), and the lifecycle every
// shard shares: requests while a shard loads get COORDINATOR_LOAD_IN_PROGRESS, after an unload
// NOT_COORDINATOR (also for operations queued or in flight, and for parked joins) with the timers
// stopped, a reload rebuilds the same groups, offsets and transactions from the log, and stale
// loads and unloads (older epochs) change nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/util/index.js';
import { iterateBatches } from '../../src/records/index.js';
import { ErrorCode, type JoinGroupResponse } from '../../src/protocol/index.js';
import {
  CoordinatorRuntime, GroupCoordinatorService, GroupCoordinatorShard, TxnCoordinatorService, decodeGroupRecord, defaultGroupConfig, defaultTxnConfig,
  encodeGroupRecord, type CoordinatorLog, type Effects, type GroupRecord, type MarkerWrite, type TopicsSnapshot,
} from '../../src/coordinator/index.js';

/** Partitions in memory; `holdReads` / `holdAppends` park reads or appends until released. */
class MemoryLog implements CoordinatorLog {
  private readonly parts = new Map<number, { bytes: Buffer; nextOffset: number }>();
  holdReads = false;
  holdAppends = false;
  private held: (() => void)[] = [];
  leader = true;
  epoch = 0;

  private part(p: number) {
    let x = this.parts.get(p);
    if (!x) this.parts.set(p, x = { bytes: Buffer.alloc(0), nextOffset: 0 });
    return x;
  }
  private async gate(hold: boolean): Promise<void> { if (hold) await new Promise<void>((r) => this.held.push(r)); }
  release(): void { const h = this.held; this.held = []; for (const r of h) r(); }
  endOffset(p: number): number { return this.part(p).nextOffset; }

  isLeader(): boolean { return this.leader; }
  leaderEpoch(): number { return this.epoch; }
  async append(partition: number, batch: Buffer): Promise<number> {
    await this.gate(this.holdAppends);
    const x = this.part(partition);
    const copy = Buffer.from(batch);
    for (const view of iterateBatches(copy)) { view.baseOffset = x.nextOffset; x.nextOffset = view.lastOffset + 1; }
    x.bytes = Buffer.concat([x.bytes, copy]);
    return ErrorCode.NONE;
  }
  async read(partition: number, offset: number): Promise<{ bytes: Buffer; endOffset: number }> {
    await this.gate(this.holdReads);
    const x = this.part(partition);
    const parts: Buffer[] = [];
    let pos = 0;
    for (const view of iterateBatches(x.bytes)) {
      if (view.lastOffset >= offset) parts.push(x.bytes.subarray(pos, pos + view.sizeInBytes));
      pos += view.sizeInBytes;
    }
    return { bytes: Buffer.concat(parts), endOffset: x.nextOffset };
  }
  logStartOffset(): number { return 0; }
}

class ManualScheduler {
  tasks: { atMs: number; fn: () => void; cancelled: boolean }[] = [];
  constructor(private readonly clock: ManualClock) {}
  schedule(delayMs: number, fn: () => void): { cancel(): void } {
    const t = { atMs: this.clock.nowMs() + delayMs, fn, cancelled: false };
    this.tasks.push(t);
    return { cancel: () => { t.cancelled = true; } };
  }
  live(): number { return this.tasks.filter((t) => !t.cancelled).length; }
  runDue(): void {
    const due = this.tasks.filter((t) => !t.cancelled && t.atMs <= this.clock.nowMs());
    this.tasks = this.tasks.filter((t) => !due.includes(t));
    for (const t of due) t.fn();
  }
}

const settle = () => new Promise<void>((r) => setImmediate(r));
async function flush(): Promise<void> { for (let i = 0; i < 20; i++) await settle(); }
const quiet = { info: () => {}, warn: () => {} };

// ---- the transaction coordinator on the runtime ---------------------------------------------------

function txnSetup(log = new MemoryLog(), epoch = 1, sender?: (m: MarkerWrite) => Promise<void>) {
  const clock = new ManualClock(1000);
  const scheduler = new ManualScheduler(clock);
  const sent: MarkerWrite[] = [];
  let nextPid = 500n;
  log.epoch = epoch;
  const service = new TxnCoordinatorService({
    clock, scheduler, config: defaultTxnConfig, numPartitions: 1, log, logger: quiet, allocateProducerId: async () => nextPid++,
    markers: { writeMarkers: sender ?? (async (m) => { sent.push(m); }) },
  });
  service.syncPartitions();
  return { log, clock, scheduler, sent, service };
}

async function beginCommit(s: ReturnType<typeof txnSetup>, transactionalId = 't'): Promise<void> {
  const init = await s.service.initProducerId({ transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
  assert.equal(init.errorCode, 0);
  const p = { transactionalId, producerId: init.producerId, producerEpoch: init.producerEpoch };
  assert.equal(await s.service.addPartitions({ ...p, partitions: [{ topic: 'a', partition: 0 }] }), 0);
  assert.equal((await s.service.endTxn({ ...p, commit: true })).errorCode, 0);
}

const txnState = (s: ReturnType<typeof txnSetup>, id = 't') => s.service.describe(id).transactionState;

test('a commit through the runtime: the Prepare record is appended, the markers written, then CompleteCommit', async () => {
  const s = txnSetup();
  await s.service.loaded();
  await beginCommit(s);
  await flush();
  assert.equal(s.sent.length, 1);
  assert.deepEqual(s.sent[0]!.partitions, [{ topic: 'a', partition: 0 }]);
  assert.equal(txnState(s), 'CompleteCommit');
  assert.equal(s.log.endOffset(0), 4);
});

test('a marker sender that fails is retried after a backoff', async () => {
  let calls = 0;
  const s = txnSetup(new MemoryLog(), 1, async () => { calls++; if (calls === 1) throw new Error('broker down'); });
  await s.service.loaded();
  await beginCommit(s);
  await flush();
  assert.equal(txnState(s), 'PrepareCommit');
  s.clock.advance(100);
  s.scheduler.runDue();
  await flush();
  assert.equal(calls, 2);
  assert.equal(txnState(s), 'CompleteCommit');
});

test('a coordinator loading a partition left mid-commit writes the markers and completes the transaction', async () => {
  const never = new Promise<void>(() => {});
  const first = txnSetup(new MemoryLog(), 1, () => never);
  await first.service.loaded();
  await beginCommit(first);
  assert.equal(txnState(first), 'PrepareCommit');
  first.service.close();
  const second = txnSetup(first.log, 2);
  await second.service.loaded();
  await flush();
  assert.equal(second.sent.length, 1);
  assert.equal(second.sent[0]!.coordinatorEpoch, 2);
  assert.equal(txnState(second), 'CompleteCommit');
});

test('a transaction coordinator that moves away and back reloads its transactions from the log', async () => {
  const never = new Promise<void>(() => {});
  const s = txnSetup(new MemoryLog(), 3, () => never);
  await s.service.loaded();
  await beginCommit(s, 'half-done');
  const init = await s.service.initProducerId({ transactionalId: 'open', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
  assert.equal(await s.service.addPartitions({ transactionalId: 'open', producerId: init.producerId, producerEpoch: init.producerEpoch, partitions: [{ topic: 'b', partition: 2 }] }), 0);
  const before = ['half-done', 'open'].map((id) => s.service.describe(id));
  s.service.unloadShard(0, 4);
  assert.equal(s.service.describe('open').errorCode, ErrorCode.NOT_COORDINATOR);
  await s.service.loadShard(0, 5);
  const after = ['half-done', 'open'].map((id) => s.service.describe(id));
  assert.deepEqual(after, before);
  assert.deepEqual(after.map((d) => d.transactionState), ['PrepareCommit', 'Ongoing']);
});

// ---- the group coordinator on the runtime: load and unload ----------------------------------------

const topics: TopicsSnapshot = {
  byName: (n) => (n === 't' ? { id: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: 4 } : undefined),
  nameOf: (id) => (id === 'AAAAAAAAAAAAAAAAAAAAAA' ? 't' : undefined),
  names: () => ['t'],
};
const client = { clientId: 'c', clientHost: '/127.0.0.1', apiVersion: 9 };

function groupRuntime(log = new MemoryLog(), config: Partial<typeof defaultGroupConfig> = {}) {
  const clock = new ManualClock(1000);
  const scheduler = new ManualScheduler(clock);
  let uuids = 0;
  const runtime = new CoordinatorRuntime<GroupRecord, GroupCoordinatorShard, Effects>({
    name: 'group coordinator', log, clock, scheduler, logger: quiet,
    newShard: () => new GroupCoordinatorShard({ ...defaultGroupConfig, initialRebalanceDelayMs: 0, ...config }, () => `u${++uuids}`),
    encode: encodeGroupRecord, decode: decodeGroupRecord,
  });
  return { log, clock, scheduler, runtime };
}

const commit = (groupId: string, offset: bigint) => ({
  groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1,
  topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] }],
});
const joinParams = (groupId: string) => ({
  groupId, memberId: '', groupInstanceId: 'i1', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, protocolType: 'consumer',
  protocols: [{ name: 'range', metadata: Buffer.alloc(0) }], reason: null,
});

/** One classic member through join and sync, a consumer group member, and committed offsets. */
async function populate(g: ReturnType<typeof groupRuntime>, p = 0): Promise<void> {
  let join: JoinGroupResponse | undefined;
  assert.equal(await g.runtime.write(p, (s, now) => s.classicJoin(now, joinParams('classic'), client, (r) => { join = r; })), 0);
  assert.equal(join?.errorCode, 0);
  let synced = -1;
  await g.runtime.write(p, (s, now) => s.classicSync(now, {
    groupId: 'classic', memberId: join!.memberId, groupInstanceId: 'i1', generationId: join!.generationId, protocolType: 'consumer', protocolName: 'range',
    assignments: [{ memberId: join!.memberId, assignment: Buffer.from([1, 2, 3]) }],
  }, (r) => { synced = r.errorCode; }));
  assert.equal(synced, 0);
  let heartbeat = -1;
  await g.runtime.write(p, (s, now) => s.consumerHeartbeat(now, {
    groupId: 'kip848', memberId: 'm1', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['t'],
    subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [],
  }, client, topics, (r) => { heartbeat = r.errorCode; }));
  assert.equal(heartbeat, 0);
  for (const [groupId, offset] of [['classic', 42n], ['kip848', 7n], ['admin', 99n]] as const) {
    await g.runtime.write(p, (s, now) => s.commitOffsets(now, commit(groupId, offset), client, () => {}));
  }
}

/** What a client could see of the shard: groups, members, assignments and committed offsets. */
function view(shard: GroupCoordinatorShard) {
  return {
    classic: shard.describeGroup('classic'),
    consumer: shard.describeConsumerGroup('kip848', topics),
    groups: shard.listGroups([], []),
    offsets: ['classic', 'kip848', 'admin'].map((g) => shard.fetchOffsets(g, null)),
  };
}

test('requests while a shard loads get COORDINATOR_LOAD_IN_PROGRESS, then it serves them', async () => {
  const g = groupRuntime();
  g.log.holdReads = true;
  const loaded = g.runtime.loadShard(0, 1);
  assert.equal(g.runtime.errorFor(0), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(await g.runtime.write(0, (s, now) => s.commitOffsets(now, commit('g', 1n), client, () => {})), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(g.runtime.activeShard(0), null);
  assert.equal(g.runtime.errorFor(1), ErrorCode.NOT_COORDINATOR, 'a partition never loaded here');
  g.log.release();
  g.log.holdReads = false;
  await loaded;
  assert.equal(g.runtime.errorFor(0), ErrorCode.NONE);
  assert.equal(await g.runtime.write(0, (s, now) => s.commitOffsets(now, commit('g', 1n), client, () => {})), ErrorCode.NONE);
  assert.equal(g.runtime.activeShard(0)!.fetchOffsets('g', null).topics[0]!.partitions[0]!.committedOffset, 1n);
});

test('the group service answers COORDINATOR_LOAD_IN_PROGRESS while loading and NOT_COORDINATOR once the partition is led elsewhere', async () => {
  const clock = new ManualClock(1000);
  const log = new MemoryLog();
  log.holdReads = true;
  const service = new GroupCoordinatorService({ clock, scheduler: new ManualScheduler(clock), config: defaultGroupConfig, numPartitions: 1, log, newUuid: () => 'u', logger: quiet });
  service.syncPartitions();
  assert.equal(service.coordinatorError('g'), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.deepEqual((await service.commitOffsets(commit('g', 5n), client))[0]!.partitions[0]!.errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  log.release();
  log.holdReads = false;
  await service.loaded();
  assert.equal((await service.commitOffsets(commit('g', 5n), client))[0]!.partitions[0]!.errorCode, 0);
  log.leader = false;
  log.epoch = 1;
  service.syncPartitions();
  assert.equal(service.coordinatorError('g'), ErrorCode.NOT_COORDINATOR);
  assert.equal(service.fetchOffsets('g', null).errorCode, ErrorCode.NOT_COORDINATOR);
  service.close();
});

test('after an unload: NOT_COORDINATOR, for queued and in-flight operations too, and the timers stop', async () => {
  const g = groupRuntime();
  await g.runtime.loadShard(0, 1);
  await populate(g);
  assert.ok(g.scheduler.live() > 0, 'session and offset-expiry timers are scheduled');
  const written = g.log.endOffset(0);
  g.log.holdAppends = true;
  const replies: number[] = [];
  const inFlight = g.runtime.write(0, (s, now) => s.commitOffsets(now, commit('admin', 100n), client, (r) => replies.push(r[0]!.partitions[0]!.errorCode)));
  const queued = g.runtime.write(0, (s, now) => s.commitOffsets(now, commit('admin', 101n), client, (r) => replies.push(r[0]!.partitions[0]!.errorCode)));
  await flush();
  g.runtime.unloadShard(0, 2);
  g.log.holdAppends = false;
  g.log.release();
  assert.equal(await inFlight, ErrorCode.NONE, 'it ran; its reply carries the error');
  assert.equal(await queued, ErrorCode.NOT_COORDINATOR);
  assert.deepEqual(replies, [ErrorCode.NOT_COORDINATOR]);
  assert.equal(g.runtime.errorFor(0), ErrorCode.NOT_COORDINATOR);
  assert.equal(await g.runtime.write(0, (s, now) => s.commitOffsets(now, commit('admin', 102n), client, () => {})), ErrorCode.NOT_COORDINATOR);
  assert.equal(g.scheduler.live(), 0, 'no timer is left');
  // Far past every session and the offset retention check: nothing fires, nothing more is written.
  g.clock.advance(10 * 24 * 3600_000);
  g.scheduler.runDue();
  await flush();
  assert.equal(g.log.endOffset(0), written + 1, 'only the in-flight commit reached the log');
});

test('an unload answers a parked JoinGroup with NOT_COORDINATOR', async () => {
  const g = groupRuntime(new MemoryLog(), { initialRebalanceDelayMs: 3000 });
  await g.runtime.loadShard(0, 1);
  let join: JoinGroupResponse | undefined;
  await g.runtime.write(0, (s, now) => s.classicJoin(now, joinParams('slow'), client, (r) => { join = r; }));
  assert.equal(join, undefined, 'held for the initial rebalance delay');
  g.runtime.unloadShard(0, 2);
  assert.equal((join as JoinGroupResponse | undefined)?.errorCode, ErrorCode.NOT_COORDINATOR);
});

test('a reload replays the log into the same groups and offsets', async () => {
  const g = groupRuntime();
  await g.runtime.loadShard(0, 1);
  await populate(g);
  // A transactional offset commit that is still pending stays pending across the reload.
  await g.runtime.write(0, (s, now) => s.txnCommitOffsets(now, { ...commit('admin', 500n), producerId: 9n, producerEpoch: 0 }, client, () => {}));
  const before = view(g.runtime.activeShard(0)!);
  g.runtime.unloadShard(0, 2);
  await g.runtime.loadShard(0, 3);
  const shard = g.runtime.activeShard(0)!;
  assert.deepEqual(view(shard), before);
  assert.equal(before.classic.state, 'Stable');
  assert.deepEqual(before.classic.members[0]!.assignment, Buffer.from([1, 2, 3]));
  assert.equal(before.consumer.members.length, 1);
  assert.equal(shard.fetchOffsets('admin', null, undefined, true).topics[0]!.partitions[0]!.errorCode, ErrorCode.UNSTABLE_OFFSET_COMMIT);
  // The marker lands after the reload: the pending offset becomes the committed one.
  await g.runtime.completeTransaction(0, 9, true);
  assert.equal(shard.fetchOffsets('admin', null).topics[0]!.partitions[0]!.committedOffset, 500n);
});

test('stale loads and unloads (older epochs) change nothing; a newer epoch reloads', async () => {
  const g = groupRuntime();
  await g.runtime.loadShard(0, 5);
  await g.runtime.write(0, (s, now) => s.commitOffsets(now, commit('g', 1n), client, () => {}));
  const first = g.runtime.activeShard(0)!;
  g.runtime.unloadShard(0, 4);
  g.runtime.unloadShard(0, 5);
  assert.equal(g.runtime.activeShard(0), first, 'an unload not newer than the load is stale');
  await g.runtime.loadShard(0, 4);
  await g.runtime.loadShard(0, 5);
  assert.equal(g.runtime.activeShard(0), first, 'an older or equal load keeps the shard');
  await g.runtime.loadShard(0, 6);
  const second = g.runtime.activeShard(0)!;
  assert.notEqual(second, first, 'a newer epoch loads a fresh shard');
  assert.equal(g.runtime.epochOf(0), 6);
  assert.equal(second.fetchOffsets('g', null).topics[0]!.partitions[0]!.committedOffset, 1n);
  g.runtime.unloadShard(0, 8);
  await g.runtime.loadShard(0, 7);
  assert.equal(g.runtime.errorFor(0), ErrorCode.NOT_COORDINATOR, 'a load older than the last unload is stale');
  await g.runtime.loadShard(0, 9);
  assert.equal(g.runtime.errorFor(0), ErrorCode.NONE);
});
