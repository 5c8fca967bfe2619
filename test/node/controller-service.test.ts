// The controller driver's answers when leadership is missing or lost: NOT_CONTROLLER in each
// operation's own response (never an exception), for requests that arrive on a node that does not
// lead and for requests pending when this node stops leading. The happy path runs in every server
// test (registration.test.ts checks its records).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ControllerService } from '../../src/node/index.js';
import type { LogMetadata } from '../../src/node/metadata-log.js';
import { MetadataDelta, MetadataImage, metadataRecord, NO_LEADER_CHANGE, type MetadataRecord } from '../../src/metadata/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { ManualClock, Prng } from '../../src/util/index.js';
import { Driver } from '../controller/driver.js';

/** A metadata log whose leadership the test sets and whose proposals never commit on their own. */
function fakeLog() {
  const state = { isLeader: true, epoch: 1 };
  const listeners: (() => void)[] = [];
  const proposals: { records: readonly MetadataRecord[]; reject: (e: Error) => void }[] = [];
  const md = {
    image: MetadataImage.EMPTY,
    leadership: () => ({ isLeader: state.isLeader, epoch: state.epoch, leaderId: state.isLeader ? 1 : 2, logEndOffset: 1, appliedOffset: 1 }),
    onChange: (l: () => void) => { listeners.push(l); },
    propose: (records: readonly MetadataRecord[]) => new Promise((_, reject) => { proposals.push({ records, reject }); }),
    hasFreshQuorumContact: () => state.isLeader,
  };
  return { md: md as unknown as LogMetadata, state, proposals, changed: () => listeners.forEach((l) => l()) };
}

/** A controller-only node (id 3000): no registered broker is this process's own. */
function options() {
  return {
    clusterId: 'c', nodeId: 3000, clock: new ManualClock(0), prng: new Prng(1), sessionTimeoutMs: 9000, uncleanLeaderElectionEnable: false,
    topicDefaults: { numPartitions: 1, defaultReplicationFactor: 1, partitionsPerRequestMax: 1000 }, validateTopicConfigs: () => null,
    logger: { info() {}, warn() {}, error() {} },
  };
}

function service(md: LogMetadata) {
  return new ControllerService(md, options());
}

test('operations pending when leadership is lost, and operations on a node that does not lead, answer NOT_CONTROLLER', async () => {
  const log = fakeLog();
  const s = service(log.md);
  s.start();
  try {
    assert.equal(s.isActive, true);
    assert.equal(log.proposals.length, 1, 'a new cluster\'s log is bootstrapped with its feature levels');
    const pending = [
      s.createTopics({ topics: [{ name: 't', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false }),
      s.alterConfigs({ resourceType: 4, resourceName: '', ops: [{ name: 'log.retention.ms', configOperation: 0, value: '1000' }], replace: false, validateOnly: false }),
      s.allocateProducerIds({ brokerId: 1, brokerEpoch: 5n }),
    ] as const;
    log.state.isLeader = false;
    log.state.epoch = 2;
    log.changed();
    for (const p of log.proposals) p.reject(new Error('not the leader'));
    const [created, altered, ids] = await Promise.all(pending);
    assert.deepEqual(created.map((t) => t.errorCode), [ErrorCode.NOT_CONTROLLER]);
    assert.equal(altered.errorCode, ErrorCode.NOT_CONTROLLER);
    // It wrote nothing, but what it read (the bootstrap records) never committed: not an answer to trust.
    assert.equal(ids.errorCode, ErrorCode.NOT_CONTROLLER);
  } finally {
    assert.equal(s.isActive, false);
    const r = await s.registerBroker({
      brokerId: 1, clusterId: 'c', incarnationId: 'AAAAAAAAAAAAAAAAAAAAAA', listeners: [], features: [], rack: null, isMigratingZkBroker: false, logDirs: [], previousBrokerEpoch: -1n,
    });
    assert.equal(r.errorCode, ErrorCode.NOT_CONTROLLER);
    const hb = await s.brokerHeartbeat({ brokerId: 1, brokerEpoch: 1n, currentMetadataOffset: 0n, wantFence: false, wantShutDown: false, offlineLogDirs: [] });
    assert.equal(hb.errorCode, ErrorCode.NOT_CONTROLLER);
    s.close();
  }
});

/**
 * A metadata log of one leader, seeded with `records`, whose proposals commit at once, or, while
 * held, when released (a slow quorum).
 */
function committingLog(records: readonly MetadataRecord[]) {
  const listeners: (() => void)[] = [];
  let image = MetadataImage.EMPTY;
  let logEndOffset = 0;
  let held: { batch: readonly MetadataRecord[] }[] | null = null;
  const quorum = { fresh: true };
  const commit = (batch: readonly MetadataRecord[]) => {
    const baseOffset = image.provenance.lastContainedOffset + 1;
    const delta = new MetadataDelta(image);
    for (const r of batch) delta.replay(r);
    image = delta.apply({ lastContainedOffset: baseOffset + batch.length - 1, lastContainedEpoch: 1, lastContainedLogTimeMs: 0 });
    queueMicrotask(() => listeners.forEach((l) => l()));
  };
  commit(records);
  logEndOffset = image.provenance.lastContainedOffset + 1;
  const md = {
    get image() { return image; },
    leadership: () => ({ isLeader: true, epoch: 1, leaderId: 1, logEndOffset, appliedOffset: image.provenance.lastContainedOffset + 1 }),
    hasFreshQuorumContact: () => quorum.fresh,
    onChange: (l: () => void) => { listeners.push(l); },
    propose: async (batch: readonly MetadataRecord[]) => {
      const baseOffset = logEndOffset;
      logEndOffset += batch.length;
      if (held === null) commit(batch); else held.push({ batch });
      return { baseOffset, epoch: 1 };
    },
  };
  return {
    md: md as unknown as LogMetadata,
    /** Whether the followers fetched from this leader a moment ago (false: it was frozen and has not heard from them since). */
    quorum,
    /** Proposals wait until release(). */
    hold() { held ??= []; },
    /** Commits what waited, in order, and commits at once again. */
    release() { const waiting = held ?? []; held = null; for (const w of waiting) commit(w.batch); },
  };
}

/** A scheduler the test fires by hand: the controller's timers never run on their own. */
function manualScheduler() {
  const tasks: { delayMs: number; fn: () => void; cancelled: boolean }[] = [];
  return {
    tasks,
    schedule(delayMs: number, fn: () => void) {
      const t = { delayMs, fn, cancelled: false };
      tasks.push(t);
      return { cancel: () => { t.cancelled = true; } };
    },
    /** Runs every pending task once (what the passing of their delay would do). */
    fire() { for (const t of tasks.splice(0)) if (!t.cancelled) t.fn(); },
    pending: () => tasks.filter((t) => !t.cancelled),
  };
}

/**
 * Brokers 1 and 2 and topic `t` (replicas [preferred, other]) after the preferred leader was
 * fenced (leadership moved to the other), came back, and rejoined the ISR (the PartitionChangeRecord
 * its leader's AlterPartition will write).
 */
function preferredLeaderCameBack() {
  const d = new Driver();
  d.startBrokers(2);
  d.createTopic('t', 1, 2);
  const t = d.controller.image.topics.getTopic('t')!;
  const [preferred, other] = t.partitions.get(0)!.replicas as [number, number];
  d.heartbeat(preferred, 1, { wantFence: true });
  assert.equal(d.controller.image.topics.getTopic('t')!.partitions.get(0)!.leader, other);
  d.heartbeat(preferred, 2);
  d.run({ records: [metadataRecord('PartitionChangeRecord', { topicId: t.id, partitionId: 0, leader: NO_LEADER_CHANGE, isr: [other, preferred], leaderRecoveryState: -1 })], response: undefined });
  return { records: d.log.map((e) => e.record), preferred, other };
}

const leaderOf = (md: LogMetadata) => md.image.topics.getTopic('t')!.partitions.get(0)!.leader;
/** The delays of pending leader-balancing passes (the session check, every 1 s here, left out). */
const balancing = (scheduler: ReturnType<typeof manualScheduler>) => scheduler.pending().map((t) => t.delayMs).filter((ms) => ms !== 1000);

test('auto.leader.rebalance.enable: every leader.imbalance.check.interval.seconds the active controller gives leadership back to a returned preferred replica, without ElectLeaders', async () => {
  const { records, preferred, other } = preferredLeaderCameBack();
  const { md } = committingLog(records);
  const scheduler = manualScheduler();
  const s = new ControllerService(md, { ...options(), leaderImbalanceCheckIntervalMs: 250, scheduler });
  s.start();
  try {
    assert.equal(s.isActive, true);
    assert.equal(leaderOf(md), other);
    assert.deepEqual(balancing(scheduler), [250], 'the first pass waits one interval');
    scheduler.fire();
    await new Promise((r) => setImmediate(r));
    assert.equal(leaderOf(md), preferred, 'leadership is back on the preferred replica');
    assert.deepEqual(balancing(scheduler), [250], 'and the next pass is scheduled');
    scheduler.fire();
    await new Promise((r) => setImmediate(r));
    assert.equal(leaderOf(md), preferred);
  } finally {
    s.close();
  }
  assert.deepEqual(scheduler.pending(), [], 'close cancels the pass');
});

test('auto.leader.rebalance.enable=false schedules no leader balancing; losing leadership cancels it', async () => {
  const { records, other } = preferredLeaderCameBack();
  const { md } = committingLog(records);
  const scheduler = manualScheduler();
  const off = new ControllerService(md, { ...options(), autoLeaderRebalanceEnable: false, leaderImbalanceCheckIntervalMs: 250, scheduler });
  off.start();
  assert.equal(off.isActive, true);
  assert.deepEqual(balancing(scheduler), []);
  off.close();
  assert.equal(leaderOf(md), other);

  const log = fakeLog();
  const on = new ControllerService(log.md, { ...options(), leaderImbalanceCheckIntervalMs: 250, scheduler });
  on.start();
  assert.deepEqual(balancing(scheduler), [250]);
  log.state.isLeader = false;
  log.changed();
  assert.equal(on.isActive, false);
  assert.deepEqual(balancing(scheduler), [], 'a resigned controller does not balance');
  on.close();
});

/**
 * Two registered, unfenced brokers and a controller whose session check the test runs by hand:
 * `stepTo` moves the clock one check interval (1 s) at a time and runs the check after each.
 */
function sessionsUnderTest() {
  const d = new Driver();
  d.startBrokers(2);
  const log = committingLog(d.log.map((e) => e.record));
  const clock = new ManualClock(0);
  const scheduler = manualScheduler();
  const s = new ControllerService(log.md, { ...options(), clock, scheduler, autoLeaderRebalanceEnable: false });
  s.start();
  assert.equal(s.isActive, true);
  const stepTo = (ms: number) => {
    while (clock.nowMs() < ms) {
      clock.advance(Math.min(1000, ms - clock.nowMs()));
      scheduler.fire();
    }
  };
  const heartbeat = (brokerId: number) => s.brokerHeartbeat({
    brokerId, brokerEpoch: log.md.image.cluster.broker(brokerId)!.epoch, currentMetadataOffset: BigInt(log.md.image.provenance.lastContainedOffset),
    wantFence: false, wantShutDown: false, offlineLogDirs: [],
  });
  const fenced = () => [1, 2].filter((id) => s.controller!.image.cluster.broker(id)!.fenced);
  return { s, log, clock, scheduler, stepTo, heartbeat, fenced };
}

test('a broker whose heartbeat waits for a slow commit is not fenced meanwhile; its silence counts from the answer', async () => {
  const { s, log, stepTo, heartbeat, fenced } = sessionsUnderTest();
  try {
    log.hold();
    // A write the quorum is slow to commit; a heartbeat read after it waits for it too.
    const created = s.createTopics({ topics: [{ name: 't', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false });
    stepTo(1000);
    let answered = false;
    const hb = heartbeat(1).then((r) => { answered = true; return r; });
    stepTo(20_000);
    assert.equal(answered, false);
    // Broker 2, silent since the controller took over at 0, is fenced; broker 1 waits on the controller.
    assert.deepEqual(fenced(), [2]);
    assert.deepEqual([...s.brokerSessionsAlive([1, 2])!], [[1, true], [2, false]]);
    log.release();
    assert.equal((await hb).errorCode, ErrorCode.NONE);
    assert.equal((await created)[0]!.errorCode, ErrorCode.NONE);
    // It heartbeats again only after the answer (at 20 s): its session runs from there.
    stepTo(28_000);
    assert.deepEqual(fenced(), [2]);
    stepTo(29_000);
    assert.deepEqual(fenced(), [1, 2]);
  } finally {
    s.close();
  }
});

test('a controller that has not heard from a majority of the quorum for a fetch timeout (woken from a stall) answers no heartbeat unfenced: it may have been replaced', async () => {
  const { s, log, stepTo, heartbeat } = sessionsUnderTest();
  try {
    stepTo(1000);
    assert.deepEqual(await heartbeat(1).then((r) => [r.errorCode, r.isFenced]), [ErrorCode.NONE, false]);
    log.quorum.fresh = false;
    assert.equal((await heartbeat(1)).errorCode, ErrorCode.NOT_CONTROLLER, 'no lease from a controller that may be stale');
    log.quorum.fresh = true;
    assert.deepEqual(await heartbeat(1).then((r) => [r.errorCode, r.isFenced]), [ErrorCode.NONE, false]);
  } finally {
    s.close();
  }
});

test('time in which the controller\'s process stood still does not count as a broker\'s silence', async () => {
  const { s, clock, scheduler, stepTo, heartbeat, fenced } = sessionsUnderTest();
  try {
    stepTo(5000);
    assert.equal((await heartbeat(1)).errorCode, ErrorCode.NONE);
    // The process stands still for 14 s: the check due at 6 s runs at 20 s, before the heartbeats
    // waiting in its sockets are read. Broker 2's silence up to when the check was due counts
    // (6 s), the stall does not.
    clock.advance(15_000);
    scheduler.fire();
    assert.deepEqual(fenced(), []);
    assert.equal((await heartbeat(1)).errorCode, ErrorCode.NONE);
    // Broker 2 stays silent: fenced once 3 s more of its silence count; broker 1 heartbeated at 20 s.
    stepTo(22_000);
    assert.deepEqual(fenced(), []);
    stepTo(23_000);
    assert.deepEqual(fenced(), [2]);
    stepTo(28_000);
    assert.deepEqual(fenced(), [2]);
    stepTo(29_000);
    assert.deepEqual(fenced(), [1, 2]);
  } finally {
    s.close();
  }
});
