// The controller driver's answers when leadership is missing or lost: NOT_CONTROLLER in each
// operation's own response (never an exception), for requests that arrive on a node that does not
// lead and for requests pending when this node stops leading. The happy path runs in every server
// test (registration.test.ts checks its records).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ControllerService } from '../../src/broker/index.js';
import type { LogMetadata } from '../../src/broker/metadata-log.js';
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
  };
  return { md: md as unknown as LogMetadata, state, proposals, changed: () => listeners.forEach((l) => l()) };
}

function options() {
  return {
    clusterId: 'c', nodeId: 1, clock: new ManualClock(0), prng: new Prng(1), sessionTimeoutMs: 9000, uncleanLeaderElectionEnable: false,
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

/** A metadata log of one leader whose proposals commit at once, seeded with `records`. */
function committingLog(records: readonly MetadataRecord[]) {
  const listeners: (() => void)[] = [];
  let image = MetadataImage.EMPTY;
  const append = (batch: readonly MetadataRecord[]) => {
    const baseOffset = image.provenance.lastContainedOffset + 1;
    const delta = new MetadataDelta(image);
    for (const r of batch) delta.replay(r);
    image = delta.apply({ lastContainedOffset: baseOffset + batch.length - 1, lastContainedEpoch: 1, lastContainedLogTimeMs: 0 });
    return baseOffset;
  };
  append(records);
  const md = {
    get image() { return image; },
    leadership: () => ({ isLeader: true, epoch: 1, leaderId: 1, logEndOffset: image.provenance.lastContainedOffset + 1, appliedOffset: image.provenance.lastContainedOffset + 1 }),
    onChange: (l: () => void) => { listeners.push(l); },
    propose: async (batch: readonly MetadataRecord[]) => {
      const baseOffset = append(batch);
      queueMicrotask(() => listeners.forEach((l) => l()));
      return { baseOffset, epoch: 1 };
    },
  };
  return md as unknown as LogMetadata;
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

test('auto.leader.rebalance.enable: every leader.imbalance.check.interval.seconds the active controller gives leadership back to a returned preferred replica, without ElectLeaders', async () => {
  const { records, preferred, other } = preferredLeaderCameBack();
  const md = committingLog(records);
  const scheduler = manualScheduler();
  const s = new ControllerService(md, { ...options(), leaderImbalanceCheckIntervalMs: 250, scheduler });
  s.start();
  try {
    assert.equal(s.isActive, true);
    assert.equal(leaderOf(md), other);
    assert.deepEqual(scheduler.pending().map((t) => t.delayMs), [250], 'the first pass waits one interval');
    scheduler.fire();
    await new Promise((r) => setImmediate(r));
    assert.equal(leaderOf(md), preferred, 'leadership is back on the preferred replica');
    assert.deepEqual(scheduler.pending().map((t) => t.delayMs), [250], 'and the next pass is scheduled');
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
  const md = committingLog(records);
  const scheduler = manualScheduler();
  const off = new ControllerService(md, { ...options(), autoLeaderRebalanceEnable: false, leaderImbalanceCheckIntervalMs: 250, scheduler });
  off.start();
  assert.equal(off.isActive, true);
  assert.deepEqual(scheduler.pending(), []);
  off.close();
  assert.equal(leaderOf(md), other);

  const log = fakeLog();
  const on = new ControllerService(log.md, { ...options(), leaderImbalanceCheckIntervalMs: 250, scheduler });
  on.start();
  assert.equal(scheduler.pending().length, 1);
  log.state.isLeader = false;
  log.changed();
  assert.equal(on.isActive, false);
  assert.deepEqual(scheduler.pending(), [], 'a resigned controller does not balance');
  on.close();
});
