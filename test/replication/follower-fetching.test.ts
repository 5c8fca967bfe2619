// Follower fetching (KIP-392) in the replica manager, with real metadata deltas and storage logs:
// brokers 1, 2, 3 in racks a, b, c replicate t-0. On the leader (broker 1) the replica selector
// picks a preferred read replica for consumers that send client metadata (Fetch v11+); on a
// follower (broker 2) consumers read up to the follower's own high watermark. Time is manual.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LEADER_SELECTOR, RACK_AWARE_REPLICA_SELECTOR, ReplicaManager, replicaSelectorFor, type ReplicaDeltaPorts, type ReplicaSelector,
} from '../../src/replication/index.js';
import { metadataRecord, type MetadataRecord } from '../../src/metadata/index.js';
import { buildRecordBatchSync, iterateBatches } from '../../src/records/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { batch, ManualTime, registerBrokerRecord, storageLog, metadataApplier } from './helpers.js';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
const EPOCHS: Record<number, bigint> = { 1: 100n, 2: 200n, 3: 300n };
const RACKS: Record<number, string> = { 1: 'a', 2: 'b', 3: 'c' };


const broker = (brokerId: number, fenced = false): MetadataRecord => registerBrokerRecord(brokerId, EPOCHS[brokerId]!, fenced, RACKS[brokerId]!);

/** Broker `me` hosting t-0 on [1, 2, 3], led by `leader`, with `isr`. */
async function replica(me: number, o: { leader?: number; isr?: number[]; fenced?: number[]; selector?: ReplicaSelector | null } = {}) {
  const time = new ManualTime();
  const rm = new ReplicaManager(me, time, time, { fetchPurgatoryOperationsMax: 100, producePurgatoryOperationsMax: 100 }, undefined,
    undefined, o.selector === undefined ? RACK_AWARE_REPLICA_SELECTOR : o.selector);
  const log = storageLog();
  const ports: ReplicaDeltaPorts = { openLog: async () => log, deleteLog: async () => {}, topicConfig: () => ({ minInsyncReplicas: 1, maxMessageBytes: undefined }) };
  const apply = metadataApplier(rm, ports);
  await apply(
    ...[1, 2, 3].map((id) => broker(id, o.fenced?.includes(id) ?? false)),
    metadataRecord('TopicRecord', { name: 't', topicId: TOPIC_ID }) as MetadataRecord,
    metadataRecord('PartitionRecord', { partitionId: 0, topicId: TOPIC_ID, replicas: [1, 2, 3], isr: o.isr ?? [1, 2, 3], leader: o.leader ?? 1, leaderEpoch: 0, partitionEpoch: 0 }) as MetadataRecord,
  );
  const p = rm.partition('t', 0)!;
  const followerFetch = (replicaId: number, fetchOffset: number) =>
    rm.fetch({
      replicaId, replicaEpoch: EPOCHS[replicaId]!, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0,
      partitions: [{ topic: 't', partition: 0, fetchOffset: BigInt(fetchOffset), partitionMaxBytes: 1 << 20, currentLeaderEpoch: 0, lastFetchedEpoch: -1, logStartOffset: 0n }],
    }).then((r) => r[0]!);
  /** A consumer's fetch; `rackId` undefined is a Fetch below v11 (no client metadata). */
  const consumerFetch = (fetchOffset: number, rackId?: string, o2: { maxWaitMs?: number; partition?: number } = {}) =>
    rm.fetch({
      maxWaitMs: o2.maxWaitMs ?? 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0,
      ...(rackId !== undefined ? { replicaId: -1, clientMetadata: { rackId, listenerName: 'PLAINTEXT' } } : {}),
      partitions: [{ topic: 't', partition: o2.partition ?? 0, fetchOffset: BigInt(fetchOffset), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }],
    }).then((r) => r[0]!);
  return { rm, p, log, time, apply, followerFetch, consumerFetch };
}

const offsetsOf = (records: Buffer | null): number[] => records === null ? [] : [...iterateBatches(records)].flatMap((b) => Array.from({ length: b.lastOffset - b.baseOffset + 1 }, (_, i) => b.baseOffset + i));

/** Broker 1 leading with 5 records that followers 2 and 3 have (high watermark 5). */
async function caughtUpLeader(o: Parameters<typeof replica>[1] = {}) {
  const h = await replica(1, o);
  await h.rm.produce(1, 1000, [{ topic: 't', partition: 0, records: batch(5) }]);
  for (const id of [2, 3]) if ((o.isr ?? [1, 2, 3]).includes(id)) await h.followerFetch(id, 5);
  return h;
}

test('RackAwareReplicaSelector: the leader names the caught-up follower in the consumer\'s rack and sends no records', async () => {
  const h = await caughtUpLeader();
  assert.equal(h.p.highWatermark, 5);
  const b = await h.consumerFetch(0, 'b');
  assert.equal(b.errorCode, ErrorCode.NONE);
  assert.equal(b.preferredReadReplica, 2);
  assert.equal(b.records, null, 'no records with a preferred read replica');
  assert.equal(b.highWatermark, 5n);
  assert.equal((await h.consumerFetch(0, 'c')).preferredReadReplica, 3);
  // The leader's own rack, a rack with no replica, no rack, or no client metadata: read here.
  for (const rack of ['a', 'z', '', undefined]) {
    const r = await h.consumerFetch(0, rack);
    assert.equal(r.preferredReadReplica, -1, `rack ${rack}`);
    assert.deepEqual(offsetsOf(r.records), [0, 1, 2, 3, 4], `rack ${rack}`);
  }
});

test('a follower outside the ISR, one whose log does not hold the fetch offset, or a fenced one is not preferred', async () => {
  const outOfIsr = await caughtUpLeader({ isr: [1, 3] });
  assert.equal((await outOfIsr.consumerFetch(0, 'b')).preferredReadReplica, -1, 'not in the ISR');
  assert.equal((await outOfIsr.consumerFetch(0, 'c')).preferredReadReplica, 3);

  const behind = await caughtUpLeader();
  await behind.rm.produce(1, 1000, [{ topic: 't', partition: 0, records: batch(2) }]);
  await behind.followerFetch(3, 7);
  // Follower 2 last reported 5: it cannot serve offset 6 yet, follower 3 can.
  assert.equal((await behind.consumerFetch(6, 'b')).preferredReadReplica, -1, 'log end offset below the fetch offset');
  assert.equal((await behind.consumerFetch(4, 'b')).preferredReadReplica, 2);
  assert.equal((await behind.consumerFetch(6, 'c')).preferredReadReplica, 3);

  const fenced = await caughtUpLeader({ fenced: [2] });
  assert.equal((await fenced.consumerFetch(0, 'b')).preferredReadReplica, -1, 'fenced: no endpoint for the consumer');
});

test('without replica.selector.class, or with LeaderSelector, consumers are never sent elsewhere', async () => {
  for (const selector of [null, LEADER_SELECTOR]) {
    const h = await caughtUpLeader({ selector });
    const r = await h.consumerFetch(0, 'b');
    assert.equal(r.preferredReadReplica, -1);
    assert.deepEqual(offsetsOf(r.records), [0, 1, 2, 3, 4]);
  }
  assert.equal(replicaSelectorFor(null), null);
  assert.equal(replicaSelectorFor('org.apache.kafka.common.replica.RackAwareReplicaSelector'), RACK_AWARE_REPLICA_SELECTOR);
  assert.throws(() => replicaSelectorFor('com.example.Nope'), /unknown class/);
});

/** Broker 2 following broker 1, its log holding offsets 0-4 with high watermark `hw`. */
async function follower(hw: number) {
  const h = await replica(2);
  assert.equal(h.p.isLeader, false);
  const leaderLog = storageLog();
  await leaderLog.appendAsLeader(batch(3), 0);
  await leaderLog.appendAsLeader(batch(2), 0);
  h.log.appendAsFollower(await leaderLog.read(0, 1 << 20, leaderLog.logEndOffset, true));
  h.p.highWatermark = hw;
  return h;
}

test('a follower serves a KIP-392 consumer up to its own high watermark; past its log end is OFFSET_OUT_OF_RANGE', async () => {
  const h = await follower(3);
  assert.equal(h.log.logEndOffset, 5);
  const r = await h.consumerFetch(0, 'b');
  assert.equal(r.errorCode, ErrorCode.NONE);
  assert.deepEqual(offsetsOf(r.records), [0, 1, 2], 'the batch of 3-4 is above the follower\'s high watermark');
  assert.equal(r.highWatermark, 3n);
  const between = await h.consumerFetch(4, 'b');
  assert.equal(between.errorCode, ErrorCode.NONE, 'between the high watermark and the log end: nothing yet, no error');
  assert.deepEqual(offsetsOf(between.records), []);
  assert.equal((await h.consumerFetch(6, 'b')).errorCode, ErrorCode.OFFSET_OUT_OF_RANGE);
  // A consumer without client metadata (Fetch below v11) reads from leaders only.
  assert.equal((await h.consumerFetch(0)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  // A partition in the metadata that this broker does not host: the consumer must go back to the leader.
  assert.equal((await h.consumerFetch(0, 'b', { partition: 1 })).errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'not in the metadata at all');
  await h.apply(metadataRecord('PartitionRecord', { partitionId: 1, topicId: TOPIC_ID, replicas: [1, 3], isr: [1, 3], leader: 1, leaderEpoch: 0, partitionEpoch: 0 }) as MetadataRecord);
  assert.equal((await h.consumerFetch(0, 'b', { partition: 1 })).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
});

test('a consumer long-polling a follower is answered when the follower\'s high watermark moves', async () => {
  const h = await follower(3);
  let answered: Awaited<ReturnType<typeof h.consumerFetch>> | null = null;
  const pending = h.consumerFetch(3, 'b', { maxWaitMs: 10_000 }).then((r) => { answered = r; return r; });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(answered, null, 'nothing below the high watermark yet: the fetch waits');
  h.p.highWatermark = 5;
  h.rm.onHighWatermark(h.p);
  const r = await pending;
  assert.deepEqual(offsetsOf(r.records), [3, 4]);
  h.time.advance(10_000);
});

test('a consumer long-polling a follower is answered when that replica becomes the leader', async () => {
  const h = await follower(3);
  const pending = h.consumerFetch(3, 'b', { maxWaitMs: 10_000 });
  await new Promise((resolve) => setImmediate(resolve));
  await h.apply(metadataRecord('PartitionChangeRecord', { topicId: TOPIC_ID, partitionId: 0, leader: 2, isr: [2] }) as MetadataRecord);
  const r = await pending;
  assert.equal(r.errorCode, ErrorCode.NONE);
  assert.ok(r.highWatermark >= 3n);
  h.time.advance(10_000);
});
