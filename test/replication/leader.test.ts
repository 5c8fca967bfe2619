// The leader side of replication with the real ReplicaManager, Partition and storage log: a
// partition led by broker 1 on replicas [1, 2, 3], made leader by real metadata deltas, and
// followers 2 and 3 simulated by sending what the Fetch protocol carries (replica id, broker
// epoch, fetch offset, last fetched epoch). Time is a manual clock and scheduler.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ReplicaManager, ReplicationQuota, type IsrChangeChannel, type IsrChangeResult, type IsrProposal, type ReplicaDeltaPorts, type Scheduler,
} from '../../src/replication/index.js';
import { metadataRecord, type MetadataRecord } from '../../src/metadata/index.js';
import { buildRecordBatchSync, iterateBatches } from '../../src/records/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { partitionKey } from '../../src/util/index.js';
import { batch, ManualTime, registerBrokerRecord, storageLog, metadataApplier } from './helpers.js';

const ME = 1;
const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
const LAG_MS = 30_000;
const EPOCHS: Record<number, bigint> = { 1: 100n, 2: 200n, 3: 300n };


const broker = (brokerId: number, fenced = false): MetadataRecord => registerBrokerRecord(brokerId, EPOCHS[brokerId]!, fenced, null);

/** Broker 1 leading t-0 on [1, 2, 3] with `isr`; ISR changes captured instead of sent. */
async function leader(opts: { isr?: number[]; minIsr?: number; fenced?: number[]; elr?: boolean } = {}) {
  const time = new ManualTime();
  const proposals: { proposal: IsrProposal; done: (r: IsrChangeResult) => void }[] = [];
  const channel: IsrChangeChannel = { submit: (proposal, done) => { proposals.push({ proposal, done }); } };
  const rm = new ReplicaManager(ME, time, time, { fetchPurgatoryOperationsMax: 100, producePurgatoryOperationsMax: 100 }, undefined,
    { replicaLagTimeMaxMs: LAG_MS, channel });
  const log = storageLog();
  const ports: ReplicaDeltaPorts = {
    openLog: async (topic: string) => (topic === 't' ? log : storageLog()), deleteLog: async () => {}, topicConfig: () => ({ minInsyncReplicas: opts.minIsr ?? 1, maxMessageBytes: undefined }),
  };
  const apply = metadataApplier(rm, ports);
  await apply(
    ...(opts.elr === true ? [metadataRecord('FeatureLevelRecord', { name: 'eligible.leader.replicas.version', featureLevel: 1 }) as MetadataRecord] : []),
    ...[1, 2, 3].map((id) => broker(id, opts.fenced?.includes(id) ?? false)),
    metadataRecord('TopicRecord', { name: 't', topicId: TOPIC_ID }) as MetadataRecord,
    metadataRecord('PartitionRecord', { partitionId: 0, topicId: TOPIC_ID, replicas: [1, 2, 3], isr: opts.isr ?? [1, 2, 3], leader: ME, leaderEpoch: 0, partitionEpoch: 0 }) as MetadataRecord,
  );
  const p = rm.partition('t', 0)!;
  /** What a follower's Fetch carries for t-0 (v15: replica id and broker epoch in ReplicaState). */
  const followerFetch = (replicaId: number, fetchOffset: number, o: { lastFetchedEpoch?: number; epoch?: bigint; maxWaitMs?: number; minBytes?: number } = {}) =>
    rm.fetch({
      replicaId, replicaEpoch: o.epoch ?? EPOCHS[replicaId] ?? -1n, maxWaitMs: o.maxWaitMs ?? 0, minBytes: o.minBytes ?? 1, maxBytes: 1 << 20, isolationLevel: 0,
      partitions: [{ topic: 't', partition: 0, fetchOffset: BigInt(fetchOffset), partitionMaxBytes: 1 << 20, currentLeaderEpoch: p.leaderEpoch, lastFetchedEpoch: o.lastFetchedEpoch ?? -1, logStartOffset: 0n }],
    }).then((r) => r[0]!);
  const consumerFetch = (fetchOffset: number, maxWaitMs = 0) =>
    rm.fetch({ maxWaitMs, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, partitions: [{ topic: 't', partition: 0, fetchOffset: BigInt(fetchOffset), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 }] })
      .then((r) => r[0]!);
  const produce = (acks: number, n: number, timeoutMs = 10_000) =>
    rm.produce(acks, timeoutMs, [{ topic: 't', partition: 0, records: batch(n) }]).then((r) => r.get(partitionKey('t', 0))!);
  const isrChange = (isr: number[]) => apply(metadataRecord('PartitionChangeRecord', { topicId: TOPIC_ID, partitionId: 0, isr }) as MetadataRecord);
  return { rm, p, log, time, proposals, apply, followerFetch, consumerFetch, produce, isrChange };
}

const offsetsOf = (records: Buffer | null): number[] => records === null ? [] : [...iterateBatches(records)].flatMap((b) => Array.from({ length: b.lastOffset - b.baseOffset + 1 }, (_, i) => b.baseOffset + i));

test('the high watermark is the smallest log end offset over the ISR: consumers see only below it, followers read to the log end', async () => {
  const h = await leader();
  await h.produce(1, 3);
  await h.produce(1, 2);
  assert.equal(h.p.log.logEndOffset, 5);
  assert.equal(h.p.highWatermark, 0, 'no follower has fetched in this leader epoch');
  assert.deepEqual(offsetsOf((await h.consumerFetch(0)).records), []);

  const f2 = await h.followerFetch(2, 0);
  assert.deepEqual(offsetsOf(f2.records), [0, 1, 2, 3, 4], 'a follower reads past the high watermark');
  await h.followerFetch(2, 5);
  assert.equal(h.p.highWatermark, 0, 'follower 3 has not fetched');
  await h.followerFetch(3, 3);
  assert.equal(h.p.highWatermark, 3);
  const c = await h.consumerFetch(0);
  assert.deepEqual(offsetsOf(c.records), [0, 1, 2]);
  assert.equal(c.highWatermark, 3n);

  await h.followerFetch(3, 5);
  assert.equal(h.p.highWatermark, 5);
  // A follower going back (it truncated) never moves the high watermark back.
  await h.followerFetch(3, 2);
  assert.equal(h.p.highWatermark, 5);
  assert.deepEqual(offsetsOf((await h.consumerFetch(3)).records), [3, 4]);
});

test('a consumer long-polling is woken by the high watermark moving, not by the append alone', async () => {
  const h = await leader();
  await h.followerFetch(2, 0);
  await h.followerFetch(3, 0);
  let answered: Awaited<ReturnType<typeof h.consumerFetch>> | null = null;
  const waiting = h.consumerFetch(0, 5_000).then((r) => { answered = r; });
  await h.produce(1, 2);
  await new Promise((r) => setImmediate(r));
  assert.equal(answered, null, 'appended but not replicated');
  await h.followerFetch(2, 2);
  await h.followerFetch(3, 2);
  await waiting;
  assert.deepEqual(offsetsOf(answered!.records), [0, 1]);
});

test('a follower long-polling at the log end is woken by the next append', async () => {
  const h = await leader();
  const parked = h.followerFetch(2, 0, { maxWaitMs: 5_000 });
  await new Promise((r) => setImmediate(r));
  await h.produce(1, 2);
  const r = await parked;
  assert.deepEqual(offsetsOf(r.records), [0, 1]);
});

test('acks=all waits until every ISR member has the batch, then answers its offset', async () => {
  const h = await leader();
  await h.followerFetch(2, 0);
  await h.followerFetch(3, 0);
  let done: Awaited<ReturnType<typeof h.produce>> | null = null;
  const acked = h.produce(-1, 3).then((r) => { done = r; });
  await new Promise((r) => setImmediate(r));
  assert.equal(done, null);
  await h.followerFetch(2, 3);
  await new Promise((r) => setImmediate(r));
  assert.equal(done, null, 'follower 3 is in the ISR and does not have it yet');
  await h.followerFetch(3, 3);
  await acked;
  assert.equal(done!.errorCode, ErrorCode.NONE);
  assert.equal(done!.baseOffset, 0n);
});

test('acks=all that no follower replicates times out with REQUEST_TIMED_OUT', async () => {
  const h = await leader();
  const acked = h.produce(-1, 1, 1_000);
  await new Promise((r) => setImmediate(r));
  h.time.advance(1_000);
  assert.equal((await acked).errorCode, ErrorCode.REQUEST_TIMED_OUT);
});

test('acks=all: NOT_ENOUGH_REPLICAS before the append when the ISR is below min.insync.replicas; NOT_ENOUGH_REPLICAS_AFTER_APPEND when it shrinks below while waiting', async () => {
  const small = await leader({ isr: [1, 2], minIsr: 3 });
  assert.equal((await small.produce(-1, 1)).errorCode, ErrorCode.NOT_ENOUGH_REPLICAS);
  assert.equal(small.p.log.logEndOffset, 0, 'nothing appended');
  assert.equal((await small.produce(1, 1)).errorCode, ErrorCode.NONE, 'acks=1 is not refused');

  const h = await leader({ minIsr: 3 });
  await h.followerFetch(2, 0);
  await h.followerFetch(3, 0);
  const acked = h.produce(-1, 2);
  await new Promise((r) => setImmediate(r));
  await h.followerFetch(2, 2);
  // Follower 3 leaves the ISR (the controller committed it): the high watermark passes the batch
  // with only two replicas.
  await h.isrChange([1, 2]);
  const r = await acked;
  assert.equal(r.errorCode, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
  assert.equal(h.p.highWatermark, 2);
});

test('an idempotent retry at acks=all answered as a duplicate waits, like the first attempt, for the high watermark to cover the batch, and answers its first offset; the same first sequence with another length is OUT_OF_ORDER_SEQUENCE_NUMBER', async () => {
  const h = await leader();
  const idempotent = (n: number, baseSequence: number, tag: string) => buildRecordBatchSync({
    records: Array.from({ length: n }, (_, i) => ({ value: Buffer.from(`${tag}-${i}`) })), producerId: 7, producerEpoch: 0, baseSequence,
  });
  const produce = (records: Buffer) => h.rm.produce(-1, 10_000, [{ topic: 't', partition: 0, records }]).then((r) => r.get(partitionKey('t', 0))!);
  await h.produce(1, 2); // offsets 0-1 from another producer
  await h.followerFetch(2, 0);
  await h.followerFetch(3, 0);
  // The first attempt is appended at 2-4; its answer is lost (the client retries).
  const first = produce(idempotent(3, 0, 'a'));
  await new Promise((r) => setImmediate(r));
  assert.equal(h.p.log.logEndOffset, 5);
  let retried: Awaited<ReturnType<typeof produce>> | null = null;
  const retry = produce(idempotent(3, 0, 'a')).then((r) => { retried = r; return r; });
  await new Promise((r) => setImmediate(r));
  assert.equal(h.p.log.logEndOffset, 5, 'the retry is not appended again');
  await h.followerFetch(2, 5);
  await new Promise((r) => setImmediate(r));
  assert.equal(retried, null, 'no acknowledgement while follower 3, in the ISR, lacks the batch');
  await h.followerFetch(3, 5);
  for (const r of [await first, await retry]) {
    assert.equal(r.errorCode, ErrorCode.NONE);
    assert.equal(r.baseOffset, 2n, 'the offset the batch was written at');
  }
  // A batch that reuses the first sequence with another length is no duplicate of it (Kafka matches
  // first and last sequence): refused, never acknowledged at the old batch's offset.
  assert.equal((await produce(idempotent(2, 0, 'b'))).errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  assert.equal(h.p.log.logEndOffset, 5);
});

test('a follower whose last fetched epoch ends earlier on the leader is answered with DivergingEpoch and its progress is not recorded', async () => {
  const h = await leader();
  await h.produce(1, 3); // offsets 0-2 at leader epoch 0
  // Broker 2 leads epoch 1 for a while (it may have written offsets 3.. that never reached us),
  // then broker 1 leads again at epoch 2, starting at its log end offset 3.
  await h.apply(metadataRecord('PartitionChangeRecord', { topicId: TOPIC_ID, partitionId: 0, leader: 2 }) as MetadataRecord);
  await h.apply(metadataRecord('PartitionChangeRecord', { topicId: TOPIC_ID, partitionId: 0, leader: ME }) as MetadataRecord);
  assert.equal(h.p.leaderEpoch, 2);
  assert.deepEqual(h.p.log.endOffsetForEpoch(0), { leaderEpoch: 0, endOffset: 3 }, 'epoch 2 starts at 3 in the cache');
  await h.produce(1, 2); // offsets 3-4 at epoch 2

  const diverged = await h.followerFetch(3, 6, { lastFetchedEpoch: 1 });
  assert.equal(diverged.errorCode, ErrorCode.NONE);
  assert.deepEqual(diverged.divergingEpoch, { epoch: 0, endOffset: 3n });
  assert.equal(diverged.records, null);
  assert.equal(h.p.followers.get(3)!.logEndOffset, -1, 'a divergent fetch does not count as progress');

  const tooFar = await h.followerFetch(3, 4, { lastFetchedEpoch: 0 });
  assert.deepEqual(tooFar.divergingEpoch, { epoch: 0, endOffset: 3n }, 'epoch 0 ended at 3 here');

  const fine = await h.followerFetch(3, 3, { lastFetchedEpoch: 0 });
  assert.equal(fine.divergingEpoch, undefined);
  assert.deepEqual(offsetsOf(fine.records), [3, 4]);
  assert.equal(h.p.followers.get(3)!.logEndOffset, 3);
});

test('fetches from a broker that is not a replica, or with an older broker epoch than its registration\'s, get NOT_LEADER_OR_FOLLOWER', async () => {
  const h = await leader();
  assert.equal((await h.followerFetch(9, 0)).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  assert.equal((await h.followerFetch(2, 0, { epoch: 200n })).errorCode, ErrorCode.NONE);
  assert.equal((await h.followerFetch(2, 0, { epoch: 150n })).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER, 'a previous incarnation');
  assert.equal((await h.followerFetch(2, 0, { epoch: -1n })).errorCode, ErrorCode.NONE, 'no epoch sent (before v15)');
  // A newer epoch than the metadata here knows (it re-registered; the delta is on its way) may
  // fetch, but may not join the ISR until the registration shows that epoch.
  const small = await leader({ isr: [1, 2] });
  assert.equal((await small.followerFetch(3, 0, { epoch: 301n })).errorCode, ErrorCode.NONE);
  assert.equal(small.proposals.length, 0);
  await small.followerFetch(3, 0, { epoch: 300n });
  assert.equal(small.proposals.length, 1);
});

test('with eligible leader replicas on, the high watermark stays put while the committed ISR is below min.insync.replicas (KIP-966), acks=1 records included; it moves once the ISR is back, or the feature is turned off', async () => {
  for (const elr of [false, true]) {
    const h = await leader({ minIsr: 2, elr });
    await h.followerFetch(2, 0);
    await h.followerFetch(3, 0);
    await h.isrChange([1]);
    assert.equal((await h.produce(1, 3)).errorCode, ErrorCode.NONE);
    h.p.maybeAdvanceHighWatermark();
    assert.equal(h.p.highWatermark, elr ? 0 : 3, `ELR ${elr}: ISR [1] with min ISR 2`);
    assert.deepEqual(offsetsOf((await h.consumerFetch(0)).records), elr ? [] : [0, 1, 2]);
    if (!elr) continue;
    // Follower 2 has every record, but only the committed ISR counts for the rule.
    await h.followerFetch(2, 3);
    assert.equal(h.p.highWatermark, 0, 'follower 2 is not in the committed ISR yet');
    await h.isrChange([1, 2]);
    assert.equal(h.p.highWatermark, 3, 'ISR [1, 2] meets min ISR 2');
    await h.isrChange([1]);
    assert.equal((await h.produce(1, 2)).errorCode, ErrorCode.NONE);
    assert.equal(h.p.highWatermark, 3);
    await h.apply(metadataRecord('FeatureLevelRecord', { name: 'eligible.leader.replicas.version', featureLevel: 0 }) as MetadataRecord);
    assert.equal(h.p.highWatermark, 5, 'feature off: the ISR alone decides');
  }
});

test('a follower that stops fetching leaves the ISR after replica.lag.time.max.ms; the shrink counts once the metadata shows it', async () => {
  const h = await leader();
  h.rm.startIsrExpiration();
  await h.produce(1, 2);
  await h.followerFetch(2, 2);
  await h.followerFetch(3, 0);
  // Follower 2 keeps up, 3 stays behind at 0.
  h.time.advance(LAG_MS / 2);
  await h.followerFetch(2, 2);
  assert.equal(h.proposals.length, 0, 'within the lag time');
  h.time.advance(LAG_MS / 2 + 1);
  await h.followerFetch(2, 2);
  h.time.advance(LAG_MS / 2);
  assert.equal(h.proposals.length, 1);
  const { proposal } = h.proposals[0]!;
  assert.deepEqual(proposal.newIsr, [{ brokerId: 1, brokerEpoch: -1n }, { brokerId: 2, brokerEpoch: 200n }]);
  assert.equal(proposal.partitionEpoch, 0);
  assert.equal(proposal.leaderEpoch, 0);
  assert.deepEqual(h.p.isr, [1, 2, 3], 'committed ISR unchanged while in flight');
  assert.equal(h.p.highWatermark, 0, 'follower 3 still holds the high watermark');
  h.time.advance(LAG_MS);
  assert.equal(h.proposals.length, 1, 'one change in flight at a time');

  await h.isrChange([1, 2]);
  assert.deepEqual(h.p.isr, [1, 2]);
  assert.equal(h.p.pendingIsrChange, null);
  assert.equal(h.p.highWatermark, 2);
  // The controller's answer, after the metadata: one shrink for /metrics (IsrShrinksPerSec).
  h.proposals[0]!.done({ errorCode: ErrorCode.NONE, leaderEpoch: 0, partitionEpoch: 1, isr: [1, 2] });
  assert.deepEqual([h.rm.stats.isrShrinks, h.rm.stats.isrExpands], [1, 0]);
  h.rm.stopIsrExpiration();
});

test('a follower that reaches the high watermark is proposed for the ISR, and counts for the high watermark while the change is in flight', async () => {
  const h = await leader({ isr: [1, 2] });
  await h.produce(1, 3);
  await h.followerFetch(2, 3);
  assert.equal(h.p.highWatermark, 3);
  await h.followerFetch(3, 1);
  assert.equal(h.proposals.length, 0, 'below the high watermark');
  await h.produce(1, 1); // LEO 4
  await h.followerFetch(3, 3);
  assert.equal(h.proposals.length, 1);
  assert.deepEqual(h.proposals[0]!.proposal.newIsr.map((m) => m.brokerId), [1, 2, 3]);
  assert.deepEqual(h.proposals[0]!.proposal.newIsr.find((m) => m.brokerId === 3)!.brokerEpoch, 300n);
  assert.deepEqual(h.p.isr, [1, 2], 'not committed yet');
  assert.deepEqual([...h.p.maximalIsr], [1, 2, 3]);
  await h.followerFetch(2, 4);
  assert.equal(h.p.highWatermark, 3, 'follower 3 at 3 holds it: the maximal ISR counts');
  await h.followerFetch(3, 4);
  assert.equal(h.proposals.length, 1, 'no second proposal while one is in flight');
  assert.equal(h.p.highWatermark, 4);

  // The controller refuses it (INELIGIBLE_REPLICA): back to the committed ISR, and the next fetch proposes again.
  h.proposals[0]!.done({ errorCode: ErrorCode.INELIGIBLE_REPLICA, leaderEpoch: -1, partitionEpoch: -1, isr: [] });
  assert.equal(h.p.pendingIsrChange, null);
  await h.followerFetch(3, 4);
  assert.equal(h.proposals.length, 2);
  assert.equal(h.rm.stats.isrExpands, 0, 'a refused expansion is not counted');
  h.proposals[1]!.done({ errorCode: ErrorCode.NONE, leaderEpoch: 0, partitionEpoch: 1, isr: [1, 2, 3] });
  assert.deepEqual([h.rm.stats.isrShrinks, h.rm.stats.isrExpands], [0, 1]);
  await h.isrChange([1, 2, 3]);
  assert.deepEqual(h.p.isr, [1, 2, 3]);
  assert.equal(h.p.partitionEpoch, 1);
  assert.equal(h.p.pendingIsrChange, null);
});

test('a fenced broker is not proposed for the ISR however caught up it is', async () => {
  const h = await leader({ isr: [1, 2], fenced: [3] });
  await h.followerFetch(2, 0);
  await h.followerFetch(3, 0);
  assert.equal(h.proposals.length, 0);
});

test('an answer at the current partition epoch (nothing to change) commits at once', async () => {
  const h = await leader({ isr: [1, 2] });
  await h.followerFetch(2, 0);
  await h.followerFetch(3, 0);
  assert.equal(h.proposals.length, 1);
  h.proposals[0]!.done({ errorCode: ErrorCode.NONE, leaderEpoch: 0, partitionEpoch: 0, isr: [1, 2] });
  assert.equal(h.p.pendingIsrChange, null);
  assert.deepEqual(h.p.isr, [1, 2]);
});

test('a new leader answers a follower\'s parked fetch at once, and parks its fetches only briefly until it has fetched the new partition', async () => {
  const h = await leader();
  const U_ID = 'AAAAAAAAAAAAAAAAAAAAAg';
  await h.apply(
    metadataRecord('TopicRecord', { name: 'u', topicId: U_ID }) as MetadataRecord,
    metadataRecord('PartitionRecord', { partitionId: 0, topicId: U_ID, replicas: [2, 1, 3], isr: [2, 1, 3], leader: 2, leaderEpoch: 0, partitionEpoch: 0 }) as MetadataRecord,
  );
  await h.followerFetch(2, 0);
  await h.followerFetch(3, 0);
  let answered = false;
  const parked = h.followerFetch(2, 0, { maxWaitMs: 500 }).then(() => { answered = true; });
  await new Promise((r) => setImmediate(r));
  assert.equal(answered, false, 'nothing to read: parked');

  // Broker 2 dies; broker 1 leads u-0 now. Follower 2's parked fetch (of t-0 alone) is answered
  // without waiting out its 500 ms: a follower that already knows fetches u-0 next.
  await h.apply(metadataRecord('PartitionChangeRecord', { topicId: U_ID, partitionId: 0, leader: 1, isr: [1, 3] }) as MetadataRecord);
  await parked;
  assert.equal(h.time.now, 1_000_000, 'answered before any time passed');

  // Follower 3 does not know yet (its fetch holds t-0 only): parked for milliseconds, not 500.
  let polled = false;
  const poll = h.followerFetch(3, 0, { maxWaitMs: 500 }).then(() => { polled = true; });
  await new Promise((r) => setImmediate(r));
  assert.equal(polled, false);
  h.time.advance(10);
  await poll;
  assert.equal(polled, true, 'answered within 10 ms');

  // Once it has fetched u-0 from the new leader, its fetches park for their whole wait again.
  await h.rm.fetch({
    replicaId: 3, replicaEpoch: EPOCHS[3]!, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0,
    partitions: [{ topic: 'u', partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: 1, lastFetchedEpoch: -1, logStartOffset: 0n }],
  });
  let waited = false;
  const full = h.followerFetch(3, 0, { maxWaitMs: 500 }).then(() => { waited = true; });
  h.time.advance(10);
  await new Promise((r) => setImmediate(r));
  assert.equal(waited, false, 'parked past 10 ms');
  h.time.advance(500);
  await full;
});

test('property: over any appends and follower fetches the high watermark never goes back and is the smallest log end offset over the ISR once it has moved', async () => {
  const { default: fc } = await import('fast-check');
  const op = fc.oneof(
    fc.record({ kind: fc.constant('append' as const), n: fc.integer({ min: 1, max: 3 }) }),
    fc.record({ kind: fc.constant('fetch' as const), replica: fc.constantFrom(2, 3), back: fc.integer({ min: 0, max: 4 }) }),
  );
  await fc.assert(fc.asyncProperty(fc.constantFrom<number[]>([1, 2, 3], [1, 2], [1, 3], [1]), fc.array(op, { maxLength: 25 }), async (isr, ops) => {
    const h = await leader({ isr });
    const latest = new Map<number, number>();
    let hw = h.p.highWatermark;
    for (const o of ops) {
      if (o.kind === 'append') await h.produce(1, o.n);
      else {
        const offset = Math.max(0, h.p.log.logEndOffset - o.back);
        assert.equal((await h.followerFetch(o.replica, offset)).errorCode, ErrorCode.NONE);
        latest.set(o.replica, offset);
      }
      const now = h.p.highWatermark;
      assert.ok(now >= hw, `high watermark went back from ${hw} to ${now}`);
      assert.ok(now <= h.p.log.logEndOffset);
      // The ISR that counts is the maximal one (a follower being added counts at once). While one
      // of its followers has not fetched, the high watermark stays where it was (0 here).
      const followers = h.p.maximalIsr.filter((id) => id !== ME);
      if (followers.every((id) => latest.has(id))) {
        const min = Math.min(h.p.log.logEndOffset, ...followers.map((id) => latest.get(id)!));
        assert.equal(now, Math.max(hw, min));
      } else if (followers.length > 0) {
        assert.equal(now, 0);
      }
      hw = now;
    }
  }), { numRuns: 40 });
});

test('ListOffsets latest: a consumer gets the high watermark, a replica or a debugging client the log end offset', async () => {
  const h = await leader();
  await h.produce(1, 4);
  await h.followerFetch(2, 0);
  await h.followerFetch(3, 2);
  await h.followerFetch(2, 4);
  assert.equal(h.p.highWatermark, 2);
  assert.equal(h.p.log.logEndOffset, 4);
  assert.equal((await h.rm.listOffsets('t', 0, -1n, -1, 0, -1)).offset, 2n, 'consumer');
  assert.equal((await h.rm.listOffsets('t', 0, -1n, -1, 0, 2)).offset, 4n, 'replica 2');
  assert.equal((await h.rm.listOffsets('t', 0, -1n, -1, 0, -2)).offset, 4n, 'debugging client');
});

test('leader throttle: a throttled follower outside the ISR gets what the quota allows, nothing once it is used up; ISR members are not throttled', async () => {
  const h = await leader({ isr: [1, 2] });
  // 1000 bytes/s: 100 bytes may move at once (the quota's shortest measured time is 100 ms).
  const quota = new ReplicationQuota(() => 1000, { windowCount: 11, windowMs: 1000 });
  h.rm.leaderThrottle = { quota, isThrottled: (_p, replicaId) => replicaId === 3 || replicaId === 2 };
  for (let i = 0; i < 5; i++) await h.produce(1, 5);
  const first = await h.followerFetch(3, 0);
  assert.deepEqual(offsetsOf(first.records), [0, 1, 2, 3, 4], 'one batch: the allowance is below a batch, and a fetch gets at least one');
  const over = await h.followerFetch(3, 5);
  assert.equal(over.errorCode, ErrorCode.NONE);
  assert.deepEqual(offsetsOf(over.records), [], 'the quota is used up: nothing for the throttled follower');
  const inSync = await h.followerFetch(2, 0);
  assert.equal(offsetsOf(inSync.records).length, 25, 'an ISR member reads everything');
  h.time.advance(10_000);
  assert.deepEqual(offsetsOf((await h.followerFetch(3, 5)).records).slice(0, 5), [5, 6, 7, 8, 9], 'after a while the quota allows bytes again');
});

test('a follower fetch whose read is overtaken by a leadership change is answered NOT_LEADER_OR_FOLLOWER, not with a fetch state for a partition no longer led here', async () => {
  const h = await leader();
  await h.produce(1, 3);
  const read = h.log.read.bind(h.log);
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  h.log.read = async (...args: Parameters<typeof read>) => { await gate; return read(...args); };
  const fetching = h.followerFetch(2, 0);
  // The delta that makes broker 2 the leader lands while the read waits.
  await h.apply(metadataRecord('PartitionChangeRecord', { topicId: TOPIC_ID, partitionId: 0, leader: 2 }) as MetadataRecord);
  release();
  const r = await fetching;
  assert.equal(r.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  assert.equal(r.records, null);
  assert.equal(h.p.isLeader, false);
});

test('a produce whose validation is overtaken by a leadership change is answered NOT_LEADER_OR_FOLLOWER and writes nothing into what is now a follower\'s log', async () => {
  const h = await leader();
  await h.produce(1, 3);
  // A compacted topic's keys (or a schema check) are read before the write, asynchronously.
  const append = h.log.appendAsLeader.bind(h.log);
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  h.log.appendAsLeader = async (...args: Parameters<typeof append>) => { await gate; return append(...args); };
  const producing = h.produce(1, 2);
  // Broker 2 becomes the leader meanwhile: this log is a follower's, its fetcher continuing from 3.
  await h.apply(metadataRecord('PartitionChangeRecord', { topicId: TOPIC_ID, partitionId: 0, leader: 2 }) as MetadataRecord);
  assert.equal(h.p.isLeader, false);
  release();
  const r = await producing;
  assert.equal(r.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  assert.equal(h.log.logEndOffset, 3, 'nothing written past where the follower fetches from');
  // And a new leader epoch on this same broker refuses an append validated under the old one.
  await h.apply(metadataRecord('PartitionChangeRecord', { topicId: TOPIC_ID, partitionId: 0, leader: ME }) as MetadataRecord);
  assert.equal(h.p.isLeader, true);
  let release2!: () => void;
  const gate2 = new Promise<void>((r) => { release2 = r; });
  h.log.appendAsLeader = async (...args: Parameters<typeof append>) => { await gate2; return append(...args); };
  const stale = h.produce(1, 2);
  await h.apply(metadataRecord('PartitionChangeRecord', { topicId: TOPIC_ID, partitionId: 0, leader: 3 }) as MetadataRecord);
  await h.apply(metadataRecord('PartitionChangeRecord', { topicId: TOPIC_ID, partitionId: 0, leader: ME }) as MetadataRecord);
  release2();
  assert.equal((await stale).errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
  h.log.appendAsLeader = append;
  const fresh = await h.produce(1, 2);
  assert.equal(fresh.errorCode, 0);
  assert.equal(fresh.baseOffset, 3n);
});
