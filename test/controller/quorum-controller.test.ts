import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QuorumController } from '../../src/controller/index.js';
import {
  MetadataRecordType, imageToRecords, BrokerFencingChange, NO_LEADER, metadataRecord,
  type MetadataImage,
} from '../../src/metadata/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { Prng } from '../../src/util/index.js';
import { Driver, registration, uuidFor, CLUSTER_ID } from './driver.js';

function partitions(image: MetadataImage, topic: string) {
  return [...image.topics.getTopic(topic)!.partitions.values()];
}

test('a new cluster begins with FeatureLevelRecords: metadata.version first, then group, transaction, share and ELR versions; kraft.version is left to Raft', () => {
  const d = new Driver();
  const names = d.log.map((e) => e.record.type === MetadataRecordType.FeatureLevelRecord ? `${e.record.data.name}=${e.record.data.featureLevel}` : '?');
  assert.deepEqual(names, ['metadata.version=25', 'group.version=1', 'transaction.version=2', 'share.version=1', 'eligible.leader.replicas.version=1']);
  assert.equal(d.controller.image.features.metadataVersion, 25);
  assert.deepEqual(d.controller.bootstrap().records, [], 'a second bootstrap writes nothing');
});

test('registration: the broker epoch is the offset of its RegisterBrokerRecord and the broker starts fenced', () => {
  const d = new Driver();
  const offset = d.controller.nextWriteOffset;
  const r = d.register(1, 0);
  assert.equal(r.errorCode, ErrorCode.NONE);
  assert.equal(r.brokerEpoch, BigInt(offset));
  const b = d.controller.image.cluster.broker(1)!;
  assert.equal(b.epoch, BigInt(offset));
  assert.equal(b.fenced, true);
  assert.equal(d.log.at(-1)!.record.type, MetadataRecordType.RegisterBrokerRecord);
});

test('a fenced broker is unfenced once its heartbeat reports a metadata offset at or past its registration', () => {
  const d = new Driver();
  const epoch = d.register(1, 0).brokerEpoch;
  const behind = d.heartbeat(1, 100, { currentMetadataOffset: epoch - 1n });
  assert.deepEqual([behind.isCaughtUp, behind.isFenced], [false, true]);
  assert.equal(d.controller.image.cluster.broker(1)!.fenced, true);
  const caughtUp = d.heartbeat(1, 200, { currentMetadataOffset: epoch });
  assert.deepEqual([caughtUp.errorCode, caughtUp.isCaughtUp, caughtUp.isFenced, caughtUp.shouldShutDown], [0, true, false, false]);
  const change = d.log.at(-1)!.record;
  assert.equal(change.type, MetadataRecordType.BrokerRegistrationChangeRecord);
  assert.equal(change.type === MetadataRecordType.BrokerRegistrationChangeRecord && change.data.fenced, BrokerFencingChange.UNFENCE);
  assert.equal(d.controller.image.cluster.broker(1)!.fenced, false);
});

test('a heartbeat with another broker epoch, or from an unregistered broker, gets STALE_BROKER_EPOCH', () => {
  const d = new Driver();
  const epoch = d.register(1, 0).brokerEpoch;
  assert.equal(d.heartbeat(1, 10, { brokerEpoch: epoch - 1n }).errorCode, ErrorCode.STALE_BROKER_EPOCH);
  assert.equal(d.heartbeat(9, 10, { brokerEpoch: 5n }).errorCode, ErrorCode.STALE_BROKER_EPOCH);
});

test('a new incarnation is refused while the old one has a live session, then accepted with a larger epoch that makes the old one stale', () => {
  const d = new Driver();
  d.startBrokers(1);
  const oldEpoch = d.controller.image.cluster.broker(1)!.epoch;
  const other = registration(1, { incarnationId: uuidFor(99) });
  assert.equal(d.run(d.controller.registerBroker(other, 8_000)).errorCode, ErrorCode.DUPLICATE_BROKER_REGISTRATION);
  const accepted = d.run(d.controller.registerBroker(other, 9_000));
  assert.equal(accepted.errorCode, ErrorCode.NONE);
  assert.ok(accepted.brokerEpoch > oldEpoch);
  assert.equal(d.controller.image.cluster.broker(1)!.fenced, true);
  assert.equal(d.heartbeat(1, 9_100, { brokerEpoch: oldEpoch }).errorCode, ErrorCode.STALE_BROKER_EPOCH);
});

test('the same incarnation may register again (a retry) and gets a new epoch', () => {
  const d = new Driver();
  const first = d.register(1, 0).brokerEpoch;
  const second = d.register(1, 10).brokerEpoch;
  assert.ok(second > first);
});

test('a broker whose supported range excludes a finalized feature level is refused with UNSUPPORTED_VERSION', () => {
  const d = new Driver();
  const old = registration(1, { features: [{ name: 'metadata.version', minSupportedVersion: 7, maxSupportedVersion: 21 }] });
  const r = d.run(d.controller.registerBroker(old, 0));
  assert.equal(r.errorCode, ErrorCode.UNSUPPORTED_VERSION);
  assert.ok(d.lines.some((l) => l.includes('does not support finalized version 25 of metadata.version. The broker wants a version between 7 and 21, inclusive.')));
  const noTxn = registration(2, { features: [{ name: 'metadata.version', minSupportedVersion: 7, maxSupportedVersion: 25 }] });
  assert.equal(d.run(d.controller.registerBroker(noTxn, 0)).errorCode, ErrorCode.UNSUPPORTED_VERSION, 'an unlisted feature is [0, 0]');
  assert.equal(d.controller.image.cluster.brokers.size, 0);
});

test('a registration from another cluster is refused with INCONSISTENT_CLUSTER_ID', () => {
  const d = new Driver();
  assert.equal(d.run(d.controller.registerBroker(registration(1, { clusterId: 'other' }), 0)).errorCode, ErrorCode.INCONSISTENT_CLUSTER_ID);
});

test('a broker silent for broker.session.timeout.ms is fenced and the partitions it led elect leaders from the rest of the ISR', () => {
  const d = new Driver();
  d.startBrokers(3);
  d.createTopic('orders', 6, 3);
  const led = partitions(d.controller.image, 'orders').filter((p) => p.leader === 1).length;
  assert.ok(led > 0);
  d.heartbeat(2, 5_000);
  d.heartbeat(3, 5_000);
  assert.deepEqual(d.run(d.controller.maybeFenceStaleBrokers(8_999)), [], 'not before the deadline');
  assert.deepEqual(d.run(d.controller.maybeFenceStaleBrokers(9_000)), [1]);
  assert.equal(d.controller.image.cluster.broker(1)!.fenced, true);
  for (const p of partitions(d.controller.image, 'orders')) {
    assert.notEqual(p.leader, 1);
    assert.ok(!p.isr.includes(1));
    assert.ok(p.isr.includes(p.leader));
  }
  assert.ok(d.lines.some((l) => /broker 1 .*fenced, no heartbeat for 9000 ms/.test(l)));
});

test('a broker fenced for a missed session is unfenced only once its heartbeat shows it has the records of its fencing (a broker woken from a stall must not lead on stale metadata)', () => {
  const d = new Driver();
  d.startBrokers(3);
  d.createTopic('orders', 6, 3);
  const before = d.controller.lastReplayedOffset;
  d.heartbeat(2, 5_000);
  d.heartbeat(3, 5_000);
  // Replayed as the active controller stages an operation: one batch (the Driver replays record by record).
  const fencing = d.controller.maybeFenceStaleBrokers(9_000);
  assert.deepEqual(fencing.response, [1]);
  const base = d.controller.nextWriteOffset;
  d.controller.replayBatch(fencing.records, base);
  fencing.records.forEach((record, i) => d.log.push({ offset: base + i, record }));
  const fencedAt = d.controller.lastReplayedOffset;
  d.controller.commit(fencedAt);
  assert.ok(fencedAt > before + 1, 'the fencing and the leaderships it moved');
  // Woken, it heartbeats with the metadata it had before its stall: past its registration (Kafka
  // would unfence it here), but without its fencing.
  const woken = d.heartbeat(1, 9_100, { currentMetadataOffset: BigInt(before) });
  assert.equal(woken.isFenced, true, 'still fenced while its metadata lacks its fencing');
  assert.equal(d.heartbeat(1, 9_200, { currentMetadataOffset: BigInt(fencedAt - 1) }).isFenced, true, 'part of the fencing batch is not enough');
  assert.equal(d.heartbeat(1, 9_300, { currentMetadataOffset: BigInt(fencedAt) }).isFenced, false);
  assert.equal(d.controller.image.cluster.broker(1)!.fenced, false);
  // A standby replaying the same records would ask the same (the offset is derived from the log).
  const standby = new QuorumController({ clusterId: CLUSTER_ID, prng: new Prng(1) });
  for (const { offset, record } of d.log) if (offset <= fencedAt) standby.replay(record, offset);
  standby.activate(fencedAt + 1, 10_000);
  const r = standby.processBrokerHeartbeat({ brokerId: 1, brokerEpoch: d.controller.image.cluster.broker(1)!.epoch, currentMetadataOffset: BigInt(before), wantFence: false, wantShutDown: false, offlineLogDirs: [] }, 10_100);
  assert.equal(r.response.isFenced, true, 'a new active controller keeps the rule');
});

test('a broker asking to be fenced is fenced; asking again to run unfences it', () => {
  const d = new Driver();
  d.startBrokers(1);
  assert.equal(d.heartbeat(1, 10, { wantFence: true }).isFenced, true);
  assert.equal(d.heartbeat(1, 20).isFenced, false);
});

test('controlled shutdown moves leaderships away first and lets the broker go once it leads nothing and has seen that', () => {
  const d = new Driver();
  d.startBrokers(3);
  d.createTopic('orders', 6, 3);
  const atStart = d.controller.lastReplayedOffset;
  const first = d.heartbeat(2, 100, { wantShutDown: true, currentMetadataOffset: BigInt(atStart) });
  assert.equal(first.shouldShutDown, false);
  assert.equal(d.controller.image.cluster.broker(2)!.inControlledShutdown, true);
  for (const p of partitions(d.controller.image, 'orders')) {
    assert.notEqual(p.leader, 2);
    assert.ok(!p.isr.includes(2));
  }
  // Still behind the record that started the shutdown: not yet.
  assert.equal(d.heartbeat(2, 200, { wantShutDown: true, currentMetadataOffset: BigInt(atStart) }).shouldShutDown, false);
  const done = d.heartbeat(2, 300, { wantShutDown: true });
  assert.deepEqual([done.shouldShutDown, done.isFenced], [true, true]);
  assert.equal(d.controller.image.cluster.broker(2)!.fenced, true);
  // New topics avoid it.
  d.createTopic('later', 4, 2);
  for (const p of partitions(d.controller.image, 'later')) assert.ok(!p.replicas.includes(2));
});

test('controlled shutdown of the only ISR member takes the partition offline rather than keeping the leader (with ELR it leaves the ISR for the ELR)', () => {
  for (const elr of [true, false]) {
    const d = new Driver();
    if (!elr) d.setFeature('eligible.leader.replicas.version', 0);
    d.startBrokers(1);
    d.createTopic('solo', 1, 1);
    d.heartbeat(1, 10, { wantShutDown: true });
    const p = partitions(d.controller.image, 'solo')[0]!;
    assert.equal(p.leader, NO_LEADER);
    assert.deepEqual([p.isr, p.elr, p.lastKnownElr], elr ? [[], [1], [1]] : [[1], [], []]);
    assert.equal(d.heartbeat(1, 20, { wantShutDown: true }).shouldShutDown, true);
  }
});

test('a fenced broker asking to shut down may go at once', () => {
  const d = new Driver();
  d.register(1, 0);
  assert.equal(d.heartbeat(1, 10, { wantShutDown: true, currentMetadataOffset: 0n }).shouldShutDown, true);
});

test('a partition whose ISR members are all fenced is offline until one returns, then led by it with a new leader epoch (with ELR: the last member waits in the ELR, the ISR empty)', () => {
  for (const elr of [true, false]) {
    const d = new Driver();
    if (!elr) d.setFeature('eligible.leader.replicas.version', 0);
    d.startBrokers(2);
    d.createTopic('pair', 1, 2);
    const before = partitions(d.controller.image, 'pair')[0]!;
    d.heartbeat(1, 1, { wantFence: true });
    d.heartbeat(2, 1, { wantFence: true });
    const offline = partitions(d.controller.image, 'pair')[0]!;
    assert.equal(offline.leader, NO_LEADER);
    const last = elr ? offline.elr[0]! : offline.isr[0]!;
    assert.deepEqual([offline.isr, offline.elr, offline.lastKnownElr], elr ? [[], [last], [last]] : [[last], [], []]);
    const other = last === 1 ? 2 : 1;
    d.heartbeat(other, 2);
    assert.equal(partitions(d.controller.image, 'pair')[0]!.leader, NO_LEADER, 'a replica outside the ISR (and ELR) does not lead');
    d.heartbeat(last, 3);
    const back = partitions(d.controller.image, 'pair')[0]!;
    assert.equal(back.leader, last);
    assert.deepEqual([back.isr, back.elr, back.lastKnownElr, back.leaderRecoveryState], [[last], [], [], 0]);
    assert.ok(back.leaderEpoch > offline.leaderEpoch && offline.leaderEpoch > before.leaderEpoch);
  }
});

test('KIP-966: a broker registering after an unclean shutdown (previousBrokerEpoch not its last epoch) leaves the ELR; after a clean one it stays and leads again', () => {
  for (const clean of [true, false]) {
    const d = new Driver();
    d.startBrokers(3);
    d.run(d.controller.createTopics({
      topics: [{ name: 'm2', numPartitions: 1, replicationFactor: 3, assignments: [], configs: [{ name: 'min.insync.replicas', value: '2' }] }], timeoutMs: 1000, validateOnly: false,
    }));
    const leader = partitions(d.controller.image, 'm2')[0]!.leader;
    const [a, b] = [1, 2, 3].filter((id) => id !== leader);
    d.heartbeat(a!, 1, { wantFence: true });
    const epochOfB = d.controller.image.cluster.broker(b!)!.epoch;
    d.heartbeat(b!, 1, { wantFence: true });
    d.heartbeat(leader, 1, { wantFence: true });
    const down = partitions(d.controller.image, 'm2')[0]!;
    assert.deepEqual([down.isr, [...down.elr].sort(), down.lastKnownElr], [[], [leader, b!].sort(), [leader]]);
    d.register(b!, 2, { incarnationId: uuidFor(100 + b!), previousBrokerEpoch: clean ? epochOfB : -1n });
    const after = partitions(d.controller.image, 'm2')[0]!;
    assert.deepEqual(after.elr, clean ? [leader, b!].filter((id) => down.elr.includes(id)) : [leader], `clean ${clean}`);
    assert.equal(d.lines.some((l) => /after an unclean shutdown/.test(l)), !clean);
    d.heartbeat(b!, 3);
    assert.equal(partitions(d.controller.image, 'm2')[0]!.leader, clean ? b : NO_LEADER, clean ? 'elected from the ELR' : 'not in the ELR: no leader');
  }
});

test('KIP-966: eligible.leader.replicas.version down to 0 clears every ELR and last known ELR; with it off the ISR keeps its last member', () => {
  const d = new Driver();
  d.startBrokers(2);
  d.createTopic('pair', 1, 2);
  d.heartbeat(1, 1, { wantFence: true });
  d.heartbeat(2, 1, { wantFence: true });
  const before = partitions(d.controller.image, 'pair')[0]!;
  assert.deepEqual([before.isr, before.elr.length, before.lastKnownElr.length], [[], 1, 1]);
  const upgrade = d.controller.updateFeatures({ timeoutMs: 1000, validateOnly: false, featureUpdates: [{ feature: 'eligible.leader.replicas.version', maxVersionLevel: 0, allowDowngrade: false, upgradeType: 1 }] }, 1);
  assert.deepEqual([upgrade.records.length, upgrade.response.errorCode], [0, ErrorCode.INVALID_UPDATE_VERSION]);
  d.run(d.controller.updateFeatures({ timeoutMs: 1000, validateOnly: false, featureUpdates: [{ feature: 'eligible.leader.replicas.version', maxVersionLevel: 0, allowDowngrade: false, upgradeType: 2 }] }, 1));
  assert.equal(d.controller.image.features.elrEnabled, false);
  const after = partitions(d.controller.image, 'pair')[0]!;
  assert.deepEqual([after.elr, after.lastKnownElr, after.leader], [[], [], NO_LEADER]);
});

test('with unclean.leader.election.enable a live replica outside the ISR takes over an offline partition, and it is logged', () => {
  const d = new Driver({ uncleanLeaderElectionEnable: true });
  d.startBrokers(2);
  d.createTopic('pair', 1, 2);
  d.heartbeat(1, 1, { wantFence: true });
  d.heartbeat(2, 1, { wantFence: true });
  const last = partitions(d.controller.image, 'pair')[0]!.isr[0]!;
  const other = last === 1 ? 2 : 1;
  d.heartbeat(other, 2);
  const p = partitions(d.controller.image, 'pair')[0]!;
  assert.equal(p.leader, other);
  assert.deepEqual(p.isr, [other]);
  assert.ok(d.lines.some((l) => /unclean leader election/.test(l)));
});

test('a topic config enables unclean election for that topic only', () => {
  const d = new Driver();
  d.startBrokers(2);
  d.run(d.controller.createTopics({ topics: [
    { name: 'unclean', numPartitions: 1, replicationFactor: 2, assignments: [], configs: [{ name: 'unclean.leader.election.enable', value: 'true' }] },
    { name: 'clean', numPartitions: 1, replicationFactor: 2, assignments: [], configs: [] },
  ], timeoutMs: 1000, validateOnly: false }));
  d.heartbeat(1, 1, { wantFence: true });
  d.heartbeat(2, 1, { wantFence: true });
  d.heartbeat(1, 2);
  d.heartbeat(2, 2);
  assert.notEqual(partitions(d.controller.image, 'unclean')[0]!.leader, NO_LEADER);
});

test('AllocateProducerIds hands out blocks of 1000 that never overlap, and refuses a stale broker epoch', () => {
  const d = new Driver();
  d.startBrokers(2);
  const e1 = d.controller.image.cluster.broker(1)!.epoch;
  const e2 = d.controller.image.cluster.broker(2)!.epoch;
  const a = d.run(d.controller.allocateProducerIds({ brokerId: 1, brokerEpoch: e1 }));
  const b = d.run(d.controller.allocateProducerIds({ brokerId: 2, brokerEpoch: e2 }));
  assert.deepEqual([a.producerIdStart, a.producerIdLen, b.producerIdStart, b.producerIdLen], [0n, 1000, 1000n, 1000]);
  assert.equal(d.controller.image.producerIds.nextProducerId, 2000n);
  assert.equal(d.run(d.controller.allocateProducerIds({ brokerId: 1, brokerEpoch: e1 + 100n })).errorCode, ErrorCode.STALE_BROKER_EPOCH);
});

test('topics are placed over unfenced brokers only, round-robin, rack-aware, with the first replica leading', () => {
  const d = new Driver();
  d.startBrokers(4, 0, (id) => (id % 2 === 0 ? 'a' : 'b'));
  d.heartbeat(4, 1, { wantFence: true });
  const created = d.createTopic('placed', 6, 2);
  assert.equal(created.errorCode, 0);
  const ps = partitions(d.controller.image, 'placed');
  const leaders = new Map<number, number>();
  for (const p of ps) {
    assert.ok(!p.replicas.includes(4));
    assert.equal(p.leader, p.replicas[0]);
    assert.deepEqual(p.isr, p.replicas);
    const racks = p.replicas.map((r) => d.controller.image.cluster.broker(r)!.rack);
    assert.notEqual(racks[0], racks[1], 'two racks: replicas on both');
    leaders.set(p.leader, (leaders.get(p.leader) ?? 0) + 1);
  }
  assert.deepEqual([...leaders.values()].sort(), [2, 2, 2]);
  assert.equal(d.createTopic('wide', 1, 4).errorCode, ErrorCode.INVALID_REPLICATION_FACTOR);
});

test('DeleteTopics and CreatePartitions go through the controller as records', () => {
  const d = new Driver();
  d.startBrokers(2);
  const t = d.createTopic('grow', 2, 2);
  const grown = d.run(d.controller.createPartitions([{ name: 'grow', count: 5, assignments: null }], false));
  assert.equal(grown[0]!.errorCode, 0);
  assert.equal(partitions(d.controller.image, 'grow').length, 5);
  for (const p of partitions(d.controller.image, 'grow')) assert.equal(p.replicas.length, 2);
  const deleted = d.run(d.controller.deleteTopics([{ name: null, topicId: t.topicId }]));
  assert.equal(deleted[0]!.errorCode, 0);
  assert.equal(d.controller.image.topics.getTopic('grow'), undefined);
});

test('a standby replaying the committed records holds the same image; the active reverts uncommitted records when it loses leadership', () => {
  const d = new Driver();
  d.startBrokers(3);
  d.createTopic('orders', 3, 3);
  const committed = d.controller.lastReplayedOffset;
  d.run(d.controller.createTopics({ topics: [{ name: 'pending', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1, validateOnly: false }), false);
  assert.ok(d.controller.image.topics.getTopic('pending'));
  assert.equal(d.controller.lastCommittedOffset, committed);

  const standby = new QuorumController({ clusterId: CLUSTER_ID, prng: new Prng(1) });
  for (const { offset, record } of d.log) if (offset <= committed) { standby.replay(record, offset); standby.commit(offset); }
  assert.deepEqual(serialise(standby.image), serialise(d.controller.committedImage));

  d.controller.deactivate();
  assert.equal(d.controller.image.topics.getTopic('pending'), undefined);
  assert.deepEqual(serialise(d.controller.image), serialise(standby.image));
  assert.throws(() => d.controller.createTopics({ topics: [], timeoutMs: 1, validateOnly: false }), /standby/);
});

test('a newly active controller gives every registered broker a full session before fencing it', () => {
  const d = new Driver();
  d.startBrokers(2);
  d.controller.deactivate();
  d.controller.activate(d.controller.lastReplayedOffset + 2, 50_000);
  assert.deepEqual(d.controller.maybeFenceStaleBrokers(58_999).response, []);
  assert.deepEqual(d.controller.maybeFenceStaleBrokers(59_000).response, [1, 2]);
});

function serialise(image: MetadataImage): string {
  return JSON.stringify(imageToRecords(image), (_k, v) => (typeof v === 'bigint' ? `${v}n` : v));
}

test('replaying an operation\'s records as one batch gives the image that replaying them one by one gives', () => {
  const d = new Driver();
  d.startBrokers(3);
  d.createTopic('orders', 4, 3);
  d.heartbeat(2, 100, { wantShutDown: true });
  const batched = new QuorumController({ clusterId: CLUSTER_ID, prng: new Prng(1) });
  let i = 0;
  while (i < d.log.length) {
    // Group consecutive offsets, as the driver appended them.
    let j = i + 1;
    while (j < d.log.length && d.log[j]!.offset === d.log[j - 1]!.offset + 1 && j - i < 5) j++;
    batched.replayBatch(d.log.slice(i, j).map((e) => e.record), d.log[i]!.offset);
    i = j;
  }
  assert.deepEqual(serialise(batched.image), serialise(d.controller.image));
  assert.equal(batched.lastReplayedOffset, d.controller.lastReplayedOffset);
});

/** Moves a partition's leadership by hand (what AlterPartition and reassignment will do later). */
function setLeader(d: Driver, topic: string, partitionId: number, leader: number): void {
  const topicId = d.controller.image.topics.getTopic(topic)!.id;
  d.run({ records: [metadataRecord('PartitionChangeRecord', { topicId, partitionId, leader, isr: null, leaderRecoveryState: -1 })], response: undefined });
}

test('preferred ElectLeaders gives leadership back to the first replica, or says why not', () => {
  const d = new Driver();
  d.startBrokers(3);
  d.createTopic('orders', 2, 3);
  const p0 = partitions(d.controller.image, 'orders')[0]!;
  const [preferred, other] = [p0.replicas[0]!, p0.replicas[1]!];
  setLeader(d, 'orders', 0, other);
  const epoch = partitions(d.controller.image, 'orders')[0]!.leaderEpoch;
  const out = d.run(d.controller.electLeaders({ electionType: 0, topicPartitions: [{ topic: 'orders', partitions: [0, 1, 7] }, { topic: 'nope', partitions: [0] }], timeoutMs: 1000 }));
  const codes = out.flatMap((t) => t.partitionResult.map((r) => `${t.topic}-${r.partitionId}:${r.errorCode}`));
  assert.deepEqual(codes, [`orders-0:${ErrorCode.NONE}`, `orders-1:${ErrorCode.ELECTION_NOT_NEEDED}`, `orders-7:${ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}`, `nope-0:${ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}`]);
  const after = partitions(d.controller.image, 'orders')[0]!;
  assert.equal(after.leader, preferred);
  assert.equal(after.leaderEpoch, epoch + 1);

  // Fenced, the preferred replica leaves the ISR and cannot be elected.
  d.heartbeat(preferred, 10, { wantFence: true });
  const again = d.run(d.controller.electLeaders({ electionType: 0, topicPartitions: [{ topic: 'orders', partitions: [0] }], timeoutMs: 1000 }));
  assert.equal(again[0]!.partitionResult[0]!.errorCode, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE);
});

test('ElectLeaders without partitions tries every partition and reports only the elections it made', () => {
  const d = new Driver();
  d.startBrokers(2);
  d.createTopic('a', 2, 2);
  const p1 = partitions(d.controller.image, 'a')[1]!;
  setLeader(d, 'a', 1, p1.replicas[1]!);
  const out = d.run(d.controller.electLeaders({ electionType: 0, topicPartitions: null, timeoutMs: 1000 }));
  assert.deepEqual(out, [{ topic: 'a', partitionResult: [{ partitionId: 1, errorCode: 0, errorMessage: null }] }]);
});

test('unclean ElectLeaders gives an offline partition a live replica outside the ISR, and only an offline one', () => {
  const d = new Driver();
  d.startBrokers(2);
  d.createTopic('pair', 1, 2);
  const elect = () => d.run(d.controller.electLeaders({ electionType: 1, topicPartitions: [{ topic: 'pair', partitions: [0] }], timeoutMs: 1000 }))[0]!.partitionResult[0]!.errorCode;
  assert.equal(elect(), ErrorCode.ELECTION_NOT_NEEDED);
  d.heartbeat(1, 1, { wantFence: true });
  d.heartbeat(2, 1, { wantFence: true });
  assert.equal(elect(), ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE);
  const last = partitions(d.controller.image, 'pair')[0]!.isr[0]!;
  const other = last === 1 ? 2 : 1;
  d.heartbeat(other, 2);
  assert.equal(partitions(d.controller.image, 'pair')[0]!.leader, NO_LEADER);
  assert.equal(elect(), ErrorCode.NONE);
  const p = partitions(d.controller.image, 'pair')[0]!;
  assert.deepEqual([p.leader, [...p.isr]], [other, [other]]);
  assert.ok(d.lines.some((l) => /unclean leader election/.test(l)));
});

test('leader balancing moves leadership back to preferred replicas that are in the ISR and may lead', () => {
  const d = new Driver();
  d.startBrokers(3);
  d.createTopic('t', 3, 3);
  for (const [i, p] of partitions(d.controller.image, 't').entries()) setLeader(d, 't', i, p.replicas[2]!);
  assert.equal(d.run(d.controller.maybeBalancePartitionLeaders()), 3);
  for (const p of partitions(d.controller.image, 't')) assert.equal(p.leader, p.replicas[0]);
  assert.equal(d.run(d.controller.maybeBalancePartitionLeaders()), 0, 'balanced: nothing to do');
});
