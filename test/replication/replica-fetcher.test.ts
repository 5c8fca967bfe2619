// The follower side of replication: a ReplicaFetcherManager copying a leader's log. Against a real
// 3-node cluster (the leader's current Fetch handling), and against a scripted leader at the
// fetcher's network port that answers as Kafka's leader does (Partition.fetchRecords: DivergingEpoch
// when the follower's last fetched epoch ends earlier on the leader, OFFSET_OUT_OF_RANGE outside the
// leader's log) or with the errors a test asks for. What is checked is the follower's log: its
// offsets, its bytes (the leader's, never re-encoded), its epochs and producer state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FetchSessionHandler, Partition, ReplicaFetcherManager, ReplicationQuota, UNTHROTTLED_RATE, type FetchPartitionData, type LeaderLink, type ReplicaFetcherConfig, type StorageLog } from '../../src/replication/index.js';
import { ErrorCode, ZERO_UUID } from '../../src/protocol/index.js';
import { buildControlBatch, iterateBatches } from '../../src/records/index.js';
import { systemClock } from '../../src/util/index.js';
import { startCluster } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { batch } from '../storage/helpers.js';
import { storageLog } from './helpers.js';

/** Every batch of a log from its start, as stored (a read stops at a segment's end, so it loops). */
async function storedBatches(log: StorageLog): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const bytes = await log.read(offset, 1 << 30, log.logEndOffset, true);
    assert.ok(bytes.length > 0, `nothing read at ${offset}`);
    for (const v of iterateBatches(bytes)) {
      out.push(Buffer.from(v.buf.subarray(v.offset, v.offset + v.sizeInBytes)));
      offset = v.lastOffset + 1;
    }
  }
  return out;
}

const TOPIC = 't';
const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
const LEADER_ID = 2;
const FOLLOWER_ID = 1;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `cond` holds; fails (instead of hanging) after a generous 30 s. */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; !cond(); i++) {
    if (i > 6000) assert.fail(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

interface PartitionAnswer {
  partitionIndex: number; errorCode: number; highWatermark: bigint; lastStableOffset: bigint; logStartOffset: bigint;
  divergingEpoch?: { epoch: number; endOffset: bigint }; abortedTransactions: null; preferredReadReplica: number; records: Buffer | null;
}

/**
 * A leader at the fetcher's network port: one partition on a real log, answered by Kafka's leader
 * rules, with hooks for the errors a test wants.
 */
class ScriptedLeader {
  leaderEpoch = 5;
  /** The high watermark answered; the log end offset when null. */
  highWatermark: number | null = null;
  /** Answer this error (once per entry) before the normal answer. */
  readonly errors: number[] = [];
  /** Connections refused before one is accepted. */
  refuseConnections = 0;
  /** Cut the records of the next answers after this many bytes of the following batch (a partial tail). */
  partialTailBytes = 0;
  readonly fetches: any[] = [];
  readonly listOffsets: any[] = [];
  readonly epochQueries: any[] = [];
  connects = 0;
  private links: LeaderLink[] = [];

  constructor(readonly log: StorageLog) {}

  connect = async (): Promise<LeaderLink> => {
    this.connects++;
    await sleep(1);
    if (this.refuseConnections > 0) {
      this.refuseConnections--;
      throw new Error('connection refused');
    }
    let closed = false;
    const link: LeaderLink = {
      get closed() { return closed; },
      close: () => { closed = true; },
      version: (apiKey) => (apiKey === 1 ? 17 : apiKey === 2 ? 9 : 4),
      send: async (apiKey: number, _version: number, body: any): Promise<any> => {
        // A real answer arrives through the event loop, never within the same microtask run.
        await new Promise((r) => setImmediate(r));
        if (closed) throw new Error('connection closed');
        if (apiKey === 1) return this.answerFetch(body);
        if (apiKey === 2) return this.answerListOffsets(body);
        if (apiKey === 23) return this.answerOffsetForLeaderEpoch(body);
        throw new Error(`scripted leader does not answer API ${apiKey}`);
      },
    };
    this.links.push(link);
    return link;
  };

  /** Drops every connection, as a leader restart would. */
  dropConnections(): void { for (const l of this.links) l.close(); }

  private async answerFetch(body: any): Promise<any> {
    this.fetches.push(body);
    const answers = [];
    for (const t of body.topics) {
      assert.equal(t.topicId, TOPIC_ID);
      for (const p of t.partitions) answers.push(await this.answerPartition(p));
    }
    if (answers.every((a) => a.records === null && a.errorCode === 0 && a.divergingEpoch === undefined)) await sleep(Math.min(body.maxWaitMs, 5));
    return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: [{ topic: '', topicId: TOPIC_ID, partitions: answers }] };
  }

  /** Kafka's Partition.fetchRecords as a leader answers a follower. */
  private async answerPartition(p: any): Promise<PartitionAnswer> {
    const log = this.log;
    const hw = this.highWatermark ?? log.logEndOffset;
    const base = { partitionIndex: p.partition, highWatermark: BigInt(hw), lastStableOffset: BigInt(hw), logStartOffset: BigInt(log.logStartOffset), abortedTransactions: null, preferredReadReplica: -1, records: null };
    const error = this.errors.shift();
    if (error !== undefined) return { ...base, errorCode: error };
    if (p.currentLeaderEpoch !== this.leaderEpoch) {
      return { ...base, errorCode: p.currentLeaderEpoch < this.leaderEpoch ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.UNKNOWN_LEADER_EPOCH };
    }
    const fetchOffset = Number(p.fetchOffset);
    if (p.lastFetchedEpoch >= 0) {
      const end = log.endOffsetForEpoch(p.lastFetchedEpoch);
      if (end === null || fetchOffset < log.logStartOffset) return { ...base, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE };
      if (end.leaderEpoch < p.lastFetchedEpoch || end.endOffset < fetchOffset) {
        return { ...base, errorCode: 0, divergingEpoch: { epoch: end.leaderEpoch, endOffset: BigInt(end.endOffset) } };
      }
    }
    if (fetchOffset < log.logStartOffset || fetchOffset > log.logEndOffset) return { ...base, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE };
    let records: Buffer | null = await log.read(fetchOffset, p.partitionMaxBytes, log.logEndOffset, true);
    if (records.length === 0) records = null;
    if (records !== null && this.partialTailBytes > 0) {
      const next = await log.read(fetchOffset + countOffsets(records), 1 << 20, log.logEndOffset, true);
      if (next.length > 0) records = Buffer.concat([records, next.subarray(0, Math.min(this.partialTailBytes, next.length - 1))]);
    }
    return { ...base, errorCode: 0, records };
  }

  /** Kafka's leader: where the asked epoch ends in its log (the current epoch at the log end). */
  private answerOffsetForLeaderEpoch(body: any): any {
    this.epochQueries.push(body);
    return {
      throttleTimeMs: 0,
      topics: body.topics.map((t: any) => ({
        topic: t.topic,
        partitions: t.partitions.map((p: any) => {
          if (p.currentLeaderEpoch !== this.leaderEpoch) return { errorCode: ErrorCode.FENCED_LEADER_EPOCH, partition: p.partition, leaderEpoch: -1, endOffset: -1n };
          const end = p.leaderEpoch === this.leaderEpoch ? { leaderEpoch: p.leaderEpoch, endOffset: this.log.logEndOffset } : this.log.endOffsetForEpoch(p.leaderEpoch);
          return { errorCode: 0, partition: p.partition, leaderEpoch: end?.leaderEpoch ?? -1, endOffset: BigInt(end?.endOffset ?? -1) };
        }),
      })),
    };
  }

  private answerListOffsets(body: any): any {
    this.listOffsets.push(body);
    return {
      throttleTimeMs: 0,
      topics: body.topics.map((t: any) => ({
        name: t.name,
        partitions: t.partitions.map((p: any) => ({
          partitionIndex: p.partitionIndex, errorCode: 0, oldStyleOffsets: [], timestamp: -1n, leaderEpoch: this.leaderEpoch,
          offset: BigInt(p.timestamp === -2n ? this.log.logStartOffset : this.log.logEndOffset),
        })),
      })),
    };
  }
}

function countOffsets(records: Buffer): number {
  let n = 0;
  for (const v of iterateBatches(records)) n += v.lastOffsetDelta + 1;
  return n;
}

const FAST: ReplicaFetcherConfig = {
  fetchMaxBytes: 1 << 20, fetchResponseMaxBytes: 10 << 20, fetchWaitMaxMs: 500, fetchMinBytes: 1, fetchBackoffMs: 10, numFetchers: 1,
};

function follower(leader: ScriptedLeader, config: Partial<ReplicaFetcherConfig> = {}, brokerEpoch = 7n, throttle?: { quota: ReplicationQuota; isThrottled: (p: Partition) => boolean }) {
  const manager = new ReplicaFetcherManager({ ...FAST, ...config }, {
    ...(throttle !== undefined ? { throttle } : {}),
    brokerId: FOLLOWER_ID, brokerEpoch: () => brokerEpoch,
    leaderEndpoint: (id) => (id === LEADER_ID ? { host: '127.0.0.1', port: 1 } : undefined),
    topicId: (topic) => (topic === TOPIC ? TOPIC_ID : undefined),
    connect: leader.connect, clock: systemClock,
    ...(process.env.FETCHER_DEBUG ? { logger: { info: console.log, warn: console.log, error: console.log } } : {}),
  });
  return manager;
}

function followerPartition(log: StorageLog, leaderEpoch: number): Partition {
  return new Partition(TOPIC, 0, log, leaderEpoch, LEADER_ID, FOLLOWER_ID, 1);
}

/** The follower holds the leader's log: same offsets, same bytes, same epochs. */
async function assertSameLog(f: StorageLog, l: StorageLog): Promise<void> {
  assert.equal(f.logStartOffset, l.logStartOffset, 'log start offset');
  assert.equal(f.logEndOffset, l.logEndOffset, 'log end offset');
  assert.deepEqual(await storedBatches(f), await storedBatches(l), 'the leader\'s bytes');
  assert.deepEqual(f.log.epochCache.all, l.log.epochCache.all, 'leader-epoch cache');
}

test('a follower fetches the leader\'s batches as they are, with its id, broker epoch and last fetched epoch', async () => {
  const leaderLog = storageLog();
  await leaderLog.appendAsLeader(batch(3), 1);
  await leaderLog.appendAsLeader(batch(2), 4);
  const leader = new ScriptedLeader(leaderLog);
  leader.leaderEpoch = 4;
  const f = storageLog();
  const p = followerPartition(f, 4);
  const m = follower(leader, { fetchWaitMaxMs: 123, fetchMinBytes: 3, fetchMaxBytes: 4567, fetchResponseMaxBytes: 89012 });
  try {
    m.addFetcherForPartitions([p]);
    await until(() => f.logEndOffset === 5 && p.highWatermark === 5, 'the follower to catch up');
    await leaderLog.appendAsLeader(batch(4), 4);
    await until(() => f.logEndOffset === 9 && p.highWatermark === 9, 'the follower to fetch the new batch');
    await assertSameLog(f, leaderLog);
    const first = leader.fetches[0];
    assert.deepEqual(first.replicaState, { replicaId: FOLLOWER_ID, replicaEpoch: 7n });
    assert.deepEqual([first.maxWaitMs, first.minBytes, first.maxBytes, first.isolationLevel], [123, 3, 89012, 0]);
    const fp = first.topics[0].partitions[0];
    assert.deepEqual([fp.fetchOffset, fp.currentLeaderEpoch, fp.lastFetchedEpoch, fp.partitionMaxBytes], [0n, 4, -1, 4567]);
    await until(() => leader.fetches.some((b) => b.topics[0].partitions[0].fetchOffset === 9n), 'the next fetch');
    const later = leader.fetches.find((b) => b.topics[0].partitions[0].fetchOffset === 9n).topics[0].partitions[0];
    assert.equal(later.lastFetchedEpoch, 4, 'the next fetch continues at the log end with the last batch\'s epoch');
  } finally {
    await m.close();
  }
});

test('the follower\'s high watermark is the leader\'s, never past its own log end', async () => {
  const leaderLog = storageLog();
  for (let i = 0; i < 4; i++) await leaderLog.appendAsLeader(batch(5), 5);
  const leader = new ScriptedLeader(leaderLog);
  leader.highWatermark = 12;
  const f = storageLog();
  const p = followerPartition(f, 5);
  // One batch per fetch: the leader's high watermark (12) is past what the follower has at first.
  const m = follower(leader, { fetchMaxBytes: 1 });
  try {
    m.addFetcherForPartitions([p]);
    await until(() => f.logEndOffset === 20, 'every batch');
    await until(() => p.highWatermark === 12, 'the leader\'s high watermark');
    assert.equal(f.log.highWatermark, 12, 'the log\'s high watermark too');
    await until(() => leader.fetches.some((b) => b.topics[0].partitions[0].fetchOffset === 20n), 'the fetch at the log end');
    const seen = leader.fetches.map((b) => Number(b.topics[0].partitions[0].fetchOffset));
    assert.deepEqual([...new Set(seen)], [0, 5, 10, 15, 20]);
  } finally {
    await m.close();
  }
});

test('follower with a divergent tail truncates to the leader\'s epoch end and then copies the leader', async () => {
  const leaderLog = storageLog();
  const f = storageLog();
  await leaderLog.appendAsLeader(batch(3), 1);
  f.appendAsFollower(await leaderLog.read(0, 1 << 20, 3, true));
  f.updateHighWatermark(3); // as its replication-offset-checkpoint restores it after a restart
  await f.appendAsLeader(batch(4), 2); // written while it led at epoch 2, never replicated
  await leaderLog.appendAsLeader(batch(2), 3); // the next leader's epoch 3 continues from offset 3
  await leaderLog.appendAsLeader(batch(2), 3);
  const leader = new ScriptedLeader(leaderLog);
  leader.leaderEpoch = 3;
  const p = followerPartition(f, 3);
  // The suffix it wrote as leader is not committed: nothing on this broker reads it (a registry
  // replaying its replica, a consumer fetching from this follower) before the truncation.
  assert.equal(p.highWatermark, 3);
  const m = follower(leader);
  try {
    m.addFetcherForPartitions([p]);
    await until(() => f.logEndOffset === 7 && f.latestEpoch === 3, 'the follower to converge');
    await assertSameLog(f, leaderLog);
    const diverged = leader.fetches[0].topics[0].partitions[0];
    assert.deepEqual([diverged.fetchOffset, diverged.lastFetchedEpoch], [7n, 2]);
    const next = leader.fetches[1].topics[0].partitions[0];
    assert.deepEqual([next.fetchOffset, next.lastFetchedEpoch], [3n, 1], 'after truncating to offset 3 it fetches on from there');
  } finally {
    await m.close();
  }
});

test('a follower told that it diverges takes no high watermark from that answer: nothing of its divergent tail is ever below it', async () => {
  const leaderLog = storageLog();
  const f = storageLog();
  await leaderLog.appendAsLeader(batch(3), 1);
  f.appendAsFollower(await leaderLog.read(0, 1 << 20, 3, true));
  f.updateHighWatermark(3);
  await f.appendAsLeader(batch(4), 2); // offsets 3-6, written while it led at epoch 2, never replicated
  await leaderLog.appendAsLeader(batch(4), 3); // the next leader's offsets 3-6, committed there
  const leader = new ScriptedLeader(leaderLog);
  leader.leaderEpoch = 3;
  leader.highWatermark = 7; // past the divergent tail's end: min(7, its log end 7) would cover all of it
  const p = followerPartition(f, 3);
  // Every high watermark the follower takes, and whether its log still held the divergent tail then
  // (a consumer fetching from this follower, KIP-392, reads up to it).
  const taken: { hw: number; divergent: boolean }[] = [];
  let hw = p.highWatermark;
  Object.defineProperty(p, 'highWatermark', { get: () => hw, set: (v: number) => { taken.push({ hw: v, divergent: f.log.epochCache.all.some((e) => e.epoch === 2) }); hw = v; }, configurable: true });
  const m = follower(leader);
  try {
    m.addFetcherForPartitions([p]);
    await until(() => f.logEndOffset === 7 && f.latestEpoch === 3 && p.highWatermark === 7, 'the follower to converge');
    await assertSameLog(f, leaderLog);
    assert.deepEqual(taken.filter((t) => t.divergent && t.hw > 3), [], 'no high watermark over the divergent offsets 3-6 while they were in the log');
  } finally {
    await m.close();
  }
});

test('a follower whose epoch the leader never had truncates in steps and fetches on', async () => {
  // The follower has epochs 1, 2 and 4 (4 written while it wrongly led), the leader 1 and 3.
  const leaderLog = storageLog();
  const f = storageLog();
  await leaderLog.appendAsLeader(batch(2), 1);
  await leaderLog.appendAsLeader(batch(2), 3);
  f.appendAsFollower(await leaderLog.read(0, 1 << 20, 2, true));
  await f.appendAsLeader(batch(3), 2);
  await f.appendAsLeader(batch(1), 4);
  const leader = new ScriptedLeader(leaderLog);
  leader.leaderEpoch = 5;
  const p = followerPartition(f, 5);
  const m = follower(leader);
  try {
    m.addFetcherForPartitions([p]);
    await until(() => f.logEndOffset === 4 && f.latestEpoch === 3, 'the follower to converge');
    await assertSameLog(f, leaderLog);
    assert.deepEqual(leader.epochQueries.map((b) => b.topics[0].partitions[0].leaderEpoch), [2], 'asked where its epoch 2 ends, after cutting epoch 4');
  } finally {
    await m.close();
  }
});

test('a follower that started an epoch at its log end without writing in it (it led from stale metadata) drops that epoch when the leader says it diverges, and fetches on', async () => {
  const leaderLog = storageLog();
  const f = storageLog();
  await leaderLog.appendAsLeader(batch(3), 0);
  f.appendAsFollower(await leaderLog.read(0, 1 << 20, 3, true));
  // Restarted on old metadata, the follower led epoch 1 for a moment: the epoch starts at its log end, no batch in it.
  f.assignEpochStartOffset(1, 3);
  await leaderLog.appendAsLeader(batch(2), 2); // the real leader of epoch 2 continues at offset 3
  const leader = new ScriptedLeader(leaderLog);
  leader.leaderEpoch = 2;
  const p = followerPartition(f, 2);
  const m = follower(leader);
  try {
    m.addFetcherForPartitions([p]);
    await until(() => f.logEndOffset === 5, 'the follower to copy the leader\'s epoch 2');
    await assertSameLog(f, leaderLog);
    const [first, next] = leader.fetches.map((x) => x.topics[0].partitions[0]);
    assert.deepEqual([first.fetchOffset, first.lastFetchedEpoch], [3n, 1]);
    assert.deepEqual([next.fetchOffset, next.lastFetchedEpoch], [3n, 0], 'epoch 1 is gone: it fetches on from offset 3 as of epoch 0');
  } finally {
    await m.close();
  }
});

test('OFFSET_OUT_OF_RANGE: a follower behind the leader\'s log start starts over there', async () => {
  const leaderLog = storageLog({ segmentBytes: 200 });
  for (let i = 0; i < 10; i++) await leaderLog.appendAsLeader(batch(2), 1);
  leaderLog.updateHighWatermark(20);
  await leaderLog.deleteRecordsBefore(12);
  const f = storageLog();
  await f.appendAsLeader(batch(2), 1); // offsets 0-1, long gone on the leader
  const leader = new ScriptedLeader(leaderLog);
  leader.leaderEpoch = 1;
  const p = followerPartition(f, 1);
  const m = follower(leader);
  try {
    m.addFetcherForPartitions([p]);
    await until(() => f.logEndOffset === 20, 'the follower to catch up');
    assert.equal(f.logStartOffset, 12);
    const offsets = async (l: StorageLog) => (await storedBatches(l)).map((b) => [...iterateBatches(b)].map((v) => [v.baseOffset, v.lastOffset]));
    assert.deepEqual(await offsets(f), await offsets(leaderLog));
    assert.deepEqual(await storedBatches(f), await storedBatches(leaderLog));
    assert.ok(leader.listOffsets.some((b) => b.replicaId === FOLLOWER_ID && b.topics[0].partitions[0].timestamp === -2n), 'asked the leader\'s log start');
  } finally {
    await m.close();
  }
});

test('OFFSET_OUT_OF_RANGE: a follower past the leader\'s log end truncates to it', async () => {
  const leaderLog = storageLog();
  const f = storageLog();
  await leaderLog.appendAsLeader(batch(3), 1);
  f.appendAsFollower(await leaderLog.read(0, 1 << 20, 3, true));
  f.appendAsFollower(Buffer.from(await (async () => { const o = storageLog(); await o.appendAsLeader(batch(3), 1); await o.appendAsLeader(batch(2), 1); return o.read(3, 1 << 20, 5, true); })()));
  assert.equal(f.logEndOffset, 5);
  const leader = new ScriptedLeader(leaderLog);
  leader.leaderEpoch = 1;
  // Only the leader's error says so (its epoch 1 also ends at its log end, 3, which is below 5:
  // Kafka's leader would answer DivergingEpoch); the OFFSET_OUT_OF_RANGE path is what is tested.
  leader.errors.push(ErrorCode.OFFSET_OUT_OF_RANGE);
  const p = followerPartition(f, 1);
  const m = follower(leader);
  try {
    m.addFetcherForPartitions([p]);
    await until(() => leader.listOffsets.length > 0 && f.logEndOffset === 3, 'the truncation');
    await leaderLog.appendAsLeader(batch(1), 1);
    await until(() => f.logEndOffset === 4, 'the next batch');
    await assertSameLog(f, leaderLog);
  } finally {
    await m.close();
  }
});

test('a partial batch at the end of an answer is left for the next fetch', async () => {
  const leaderLog = storageLog();
  for (let i = 0; i < 3; i++) await leaderLog.appendAsLeader(batch(2), 2);
  const leader = new ScriptedLeader(leaderLog);
  leader.leaderEpoch = 2;
  leader.partialTailBytes = 30;
  const f = storageLog();
  const p = followerPartition(f, 2);
  const m = follower(leader, { fetchMaxBytes: 1 });
  try {
    m.addFetcherForPartitions([p]);
    await until(() => f.logEndOffset === 6, 'the follower to catch up');
    await assertSameLog(f, leaderLog);
  } finally {
    await m.close();
  }
});

test('retriable partition errors back off and fetch again; FENCED_LEADER_EPOCH waits for the next leader change', async () => {
  const leaderLog = storageLog();
  await leaderLog.appendAsLeader(batch(2), 3);
  const leader = new ScriptedLeader(leaderLog);
  leader.leaderEpoch = 3;
  leader.errors.push(ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_LEADER_EPOCH, ErrorCode.UNKNOWN_TOPIC_ID);
  const f = storageLog();
  const p = followerPartition(f, 3);
  const m = follower(leader);
  try {
    m.addFetcherForPartitions([p]);
    await until(() => f.logEndOffset === 2, 'the follower to fetch after the errors');
    assert.ok(leader.fetches.length >= 4);
    // The leader moves to epoch 4 before this broker hears of it: fenced, the partition stops.
    leader.leaderEpoch = 4;
    await leaderLog.appendAsLeader(batch(1), 4);
    await until(() => m.fetcherOf(p)?.fetchOffsetOf(p) === undefined, 'the fenced partition to stop');
    const fetched = leader.fetches.length;
    assert.equal(f.logEndOffset, 2);
    // The metadata delta: the same leader at epoch 4 (makeFollower, then remove and add).
    p.makeFollower({ leader: LEADER_ID, leaderEpoch: 4, partitionEpoch: 4, isr: [LEADER_ID, FOLLOWER_ID] });
    m.removeFetcherForPartitions([p]);
    m.addFetcherForPartitions([p]);
    await until(() => f.logEndOffset === 3, 'fetching at the new epoch');
    assert.ok(leader.fetches.length > fetched);
    await assertSameLog(f, leaderLog);
  } finally {
    await m.close();
  }
});

test('a refused or lost connection backs off and reconnects', async () => {
  const leaderLog = storageLog();
  await leaderLog.appendAsLeader(batch(2), 1);
  const leader = new ScriptedLeader(leaderLog);
  leader.leaderEpoch = 1;
  leader.refuseConnections = 2;
  const f = storageLog();
  const p = followerPartition(f, 1);
  const m = follower(leader);
  try {
    m.addFetcherForPartitions([p]);
    await until(() => f.logEndOffset === 2, 'the follower to connect and fetch');
    assert.equal(leader.connects, 3);
    leader.dropConnections();
    await leaderLog.appendAsLeader(batch(3), 1);
    await until(() => f.logEndOffset === 5, 'the follower to reconnect and fetch');
    assert.equal(leader.connects, 4);
    await assertSameLog(f, leaderLog);
  } finally {
    await m.close();
  }
});

test('removing the last partition closes its fetcher; partitions of one leader share a fetcher', async () => {
  const leaderLog = storageLog();
  const leader = new ScriptedLeader(leaderLog);
  leader.leaderEpoch = 1;
  const a = followerPartition(storageLog(), 1);
  const b = new Partition(TOPIC, 1, storageLog(), 1, LEADER_ID, FOLLOWER_ID, 1);
  const m = follower(leader);
  try {
    m.addFetcherForPartitions([a, b]);
    assert.equal(m.fetcherCount, 1);
    assert.equal(m.fetcherOf(a), m.fetcherOf(b));
    await until(() => leader.fetches.length > 0, 'a fetch');
    assert.equal(leader.fetches[0].topics[0].partitions.length, 2, 'one Fetch carries both partitions');
    m.removeFetcherForPartitions([a]);
    assert.equal(m.fetcherCount, 1);
    m.removeFetcherForPartitions([b]);
    assert.equal(m.fetcherCount, 0);
    assert.equal(m.fetcherOf(b), undefined);
  } finally {
    await m.close();
  }
});

test('property: after fetching, the follower\'s bytes equal the leader\'s for the same offsets, whatever tail it diverged with', async () => {
  const history = fc.record({
    common: fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 4 }),
    followerTail: fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 3 }),
    leaderTail: fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 3 }),
    leaderTailEpochs: fc.integer({ min: 1, max: 2 }),
    maxBytes: fc.constantFrom(1, 200, 1 << 20),
  });
  await fc.assert(fc.asyncProperty(history, async (h) => {
    const leaderLog = storageLog();
    const f = storageLog();
    // Common history at epoch 1, then the follower led at epoch 2 and wrote a tail nobody got,
    // then the leader led at epochs 3.. and wrote its own.
    for (const n of h.common) await leaderLog.appendAsLeader(batch(n), 1);
    if (leaderLog.logEndOffset > 0) f.appendAsFollower(await leaderLog.read(0, 1 << 30, leaderLog.logEndOffset, true));
    for (const n of h.followerTail) await f.appendAsLeader(batch(n), 2);
    let epoch = 3;
    for (let i = 0; i < h.leaderTail.length; i++) {
      if (i > 0 && i % h.leaderTailEpochs === 0) epoch++;
      await leaderLog.appendAsLeader(batch(h.leaderTail[i]!), epoch);
    }
    const leader = new ScriptedLeader(leaderLog);
    leader.leaderEpoch = 9;
    const p = followerPartition(f, 9);
    const m = follower(leader, { fetchMaxBytes: h.maxBytes });
    try {
      m.addFetcherForPartitions([p]);
      const caughtUp = () => m.fetcherOf(p)?.fetchOffsetOf(p) === leaderLog.logEndOffset && f.logEndOffset === leaderLog.logEndOffset
        && f.latestEpoch === leaderLog.latestEpoch;
      await until(caughtUp, 'the follower to converge');
      // One more round trip: a diverging answer at the same end offset would still truncate.
      const n = leader.fetches.length;
      await until(() => leader.fetches.length > n + 1, 'another fetch');
      assert.deepEqual(await storedBatches(f), await storedBatches(leaderLog));
      assert.deepEqual(f.log.epochCache.all, leaderLog.log.epochCache.all);
    } finally {
      await m.close();
    }
  }), { numRuns: 40 });
});

test('idempotent and transactional producer state follows the leader\'s batches to the follower', async () => {
  const leaderLog = storageLog();
  await leaderLog.appendAsLeader(batch(2, { producerId: 77, producerEpoch: 0, baseSequence: 0 }), 1);
  await leaderLog.appendAsLeader(batch(3, { producerId: 77, producerEpoch: 0, baseSequence: 2 }), 1);
  // Producer 99's transaction is aborted; producer 88's is still open.
  await leaderLog.appendAsLeader(batch(2, { producerId: 99, producerEpoch: 0, baseSequence: 0, isTransactional: true }), 1);
  await leaderLog.appendAsLeader(buildControlBatch({ type: 'ABORT', producerId: 99, producerEpoch: 0, coordinatorEpoch: 3, timestamp: 1_000 }), 1, 'coordinator');
  await leaderLog.appendAsLeader(batch(1, { producerId: 88, producerEpoch: 1, baseSequence: 0, isTransactional: true }), 1);
  const leader = new ScriptedLeader(leaderLog);
  leader.leaderEpoch = 1;
  const f = storageLog();
  const p = followerPartition(f, 1);
  const m = follower(leader);
  try {
    m.addFetcherForPartitions([p]);
    await until(() => f.logEndOffset === 9, 'the follower to catch up');
  } finally {
    await m.close();
  }
  assert.deepEqual(f.activeProducers(), leaderLog.activeProducers());
  assert.equal(f.firstUnstableOffset(), 8, 'the open transaction holds the last stable offset on the follower too');
  assert.deepEqual(f.abortedTransactions(0, 9), leaderLog.abortedTransactions(0, 9), 'read_committed consumers of the follower skip the same aborted data');
  assert.deepEqual(f.abortedTransactions(0, 9).map((t) => [t.producerId, t.firstOffset]), [[99, 5]]);
  // Led by the follower now, a retry of the producer's last batch is a duplicate, not a new append.
  const retry = await f.appendAsLeader(batch(3, { producerId: 77, producerEpoch: 0, baseSequence: 2 }), 2);
  assert.deepEqual([retry.firstOffset, retry.lastOffset, f.logEndOffset], [2, 4, 9]);
});

test('a fetch session sends every partition first, then only the changed ones, and starts over after an error', () => {
  const h = new FetchSessionHandler();
  const part = (partition: number, fetchOffset: bigint): { topicId: string; data: FetchPartitionData } => ({
    topicId: TOPIC_ID,
    data: { partition, currentLeaderEpoch: 1, fetchOffset, lastFetchedEpoch: 1, logStartOffset: 0n, partitionMaxBytes: 100, replicaDirectoryId: ZERO_UUID },
  });
  const full = h.build([part(0, 5n), part(1, 7n)]);
  assert.deepEqual([full.sessionId, full.sessionEpoch, full.toSend.length, full.forgotten.length], [0, 0, 2, 0]);
  h.handleResponse(0, 42);
  const inc = h.build([part(0, 9n), part(1, 7n)]);
  assert.deepEqual([inc.sessionId, inc.sessionEpoch], [42, 1]);
  assert.deepEqual(inc.toSend.map((p) => [p.data.partition, p.data.fetchOffset]), [[0, 9n]], 'only the partition that moved');
  h.handleResponse(0, 42);
  const dropped = h.build([part(1, 7n)]);
  assert.deepEqual([dropped.sessionEpoch, dropped.toSend.length], [2, 0]);
  assert.deepEqual(dropped.forgotten, [{ topicId: TOPIC_ID, partition: 0 }]);
  h.handleResponse(ErrorCode.INVALID_FETCH_SESSION_EPOCH, 0);
  const again = h.build([part(1, 7n)]);
  assert.deepEqual([again.sessionId, again.sessionEpoch, again.toSend.length], [0, 0, 1], 'a full fetch opens a new session');
  h.handleResponse(0, 0);
  assert.equal(h.build([part(1, 7n)]).sessionEpoch, 0, 'a leader without session slots: full fetches');
});

test('in a 3-node cluster, followers copy the leader\'s log byte for byte and learn its high watermark', async () => {
  const cluster = await startCluster({ nodes: 3, config: { 'replica.fetch.wait.max.ms': '100' } });
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    const created = await client.retrying(() => client.admin(ApiKey.CreateTopics, {
      topics: [{ name: 'replicated', numPartitions: 2, replicationFactor: 3, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false,
    }, 7));
    assert.equal(created.topics[0].errorCode, 0);
    const brokers = () => cluster.nodes.map((n) => n.server!.broker!);
    for (let partition = 0; partition < 2; partition++) {
      await until(() => brokers().every((b) => b.replicaManager.partition('replicated', partition) !== undefined), 'every replica to open');
      const leader = brokers().find((b) => b.replicaManager.partition('replicated', partition)!.isLeader)!;
      const followers = brokers().filter((b) => b !== leader);
      assert.equal(followers.length, 2);
      for (let i = 0; i < 5; i++) {
        const out = await leader.replicaManager.produce(1, 10_000, [{ topic: 'replicated', partition, records: batch(i + 1, { producerId: 5 + partition, producerEpoch: 0, baseSequence: (i * (i + 1)) / 2 }) }]);
        assert.equal([...out.values()][0]!.errorCode, 0);
      }
      const lp = leader.replicaManager.partition('replicated', partition)!;
      assert.equal(lp.log.logEndOffset, 15);
      for (const b of followers) {
        const fp = b.replicaManager.partition('replicated', partition)!;
        assert.equal(fp.isLeader, false);
        await until(() => fp.log.logEndOffset === 15 && fp.highWatermark === lp.highWatermark, `broker ${b.deps.nodeId} to catch up`);
        assert.deepEqual(await fp.log.read(0, 1 << 20, 15, true), await lp.log.read(0, 1 << 20, 15, true), 'the leader\'s bytes');
        assert.deepEqual(fp.log.activeProducers(), lp.log.activeProducers());
        assert.deepEqual(fp.log.endOffsetForEpoch(lp.leaderEpoch), { leaderEpoch: lp.leaderEpoch, endOffset: 15 });
      }
    }
    // Followers fetch in sessions (KIP-227): each leader holds one per follower fetching from it.
    assert.ok(brokers().some((b) => b.fetchSessions.size > 0), 'fetch sessions on the leaders');
  } finally {
    client.close();
    await cluster.close();
  }
});



test('after its leader is killed, a follower that fetched its log leads it: an idempotent retry is a duplicate, not a second copy', async () => {
  const cluster = await startCluster({ nodes: 3, config: { 'replica.fetch.wait.max.ms': '100', 'broker.session.timeout.ms': '3000', 'broker.heartbeat.interval.ms': '500' } });
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    const created = await client.retrying(() => client.admin(ApiKey.CreateTopics, {
      topics: [{ name: 'failover', numPartitions: 3, replicationFactor: 3, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false,
    }, 7));
    assert.equal(created.topics[0].errorCode, 0);
    const live = () => cluster.nodes.filter((n) => n.running).map((n) => n.server!.broker!);
    await until(() => live().every((b) => [0, 1, 2].every((i) => b.replicaManager.partition('failover', i) !== undefined)), 'every replica to open');
    // A partition led by a node that is not the metadata quorum's leader: killing it needs no new controller.
    const controllerNode = cluster.leaderId();
    let partition = -1;
    let leaderNode = -1;
    for (let i = 0; i < 3 && partition < 0; i++) {
      const owner = cluster.nodes.find((n) => n.server!.broker!.replicaManager.partition('failover', i)!.isLeader)!;
      if (owner.nodeId !== controllerNode) [partition, leaderNode] = [i, owner.nodeId];
    }
    assert.ok(partition >= 0, 'a partition led away from the controller');
    const oldLeader = cluster.nodes.find((n) => n.nodeId === leaderNode)!.server!.broker!;
    const records = (seq: number, n: number) => batch(n, { producerId: 4242, producerEpoch: 0, baseSequence: seq });
    for (const [seq, n] of [[0, 2], [2, 3], [5, 1]] as const) {
      const out = await oldLeader.replicaManager.produce(1, 10_000, [{ topic: 'failover', partition, records: records(seq, n) }]);
      assert.equal([...out.values()][0]!.errorCode, 0);
    }
    const before = await oldLeader.replicaManager.partition('failover', partition)!.log.read(0, 1 << 20, 6, true);
    const followers = live().filter((b) => b !== oldLeader);
    await until(() => followers.every((b) => b.replicaManager.partition('failover', partition)!.log.logEndOffset === 6), 'the followers to catch up');
    await cluster.nodes.find((n) => n.nodeId === leaderNode)!.kill();
    await until(() => followers.some((b) => b.replicaManager.partition('failover', partition)!.isLeader), 'a new leader from the ISR');
    const newLeader = followers.find((b) => b.replicaManager.partition('failover', partition)!.isLeader)!;
    assert.deepEqual(await newLeader.replicaManager.partition('failover', partition)!.log.read(0, 1 << 20, 6, true), before, 'the old leader\'s bytes');
    // The producer did not hear back for its last batch and sends it again to the new leader.
    const retry = [...(await newLeader.replicaManager.produce(1, 10_000, [{ topic: 'failover', partition, records: records(5, 1) }])).values()][0]!;
    assert.deepEqual([retry.errorCode, retry.baseOffset], [0, 5n], 'answered with the offset it got the first time');
    const next = [...(await newLeader.replicaManager.produce(1, 10_000, [{ topic: 'failover', partition, records: records(6, 2) }])).values()][0]!;
    assert.deepEqual([next.errorCode, next.baseOffset], [0, 6n]);
    const gap = [...(await newLeader.replicaManager.produce(1, 10_000, [{ topic: 'failover', partition, records: records(10, 1) }])).values()][0]!;
    assert.equal(gap.errorCode, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, 'the sequence continues from the old leader\'s');
  } finally {
    client.close();
    await cluster.close();
  }
});

test('follower throttle: a throttled partition asks for no more than the quota allows and is left out while it is used up', async () => {
  const leaderLog = storageLog();
  for (let i = 0; i < 40; i++) await leaderLog.appendAsLeader(batch(5), 5);
  const leader = new ScriptedLeader(leaderLog);
  let rate = 2000;
  const quota = new ReplicationQuota(() => rate, { windowCount: 11, windowMs: 1000 });
  const f = storageLog();
  const p = followerPartition(f, 5);
  const m = follower(leader, {}, 7n, { quota, isThrottled: () => true });
  try {
    const startMs = performance.now();
    m.addFetcherForPartitions([p]);
    await until(() => leader.fetches.length > 0, 'a first fetch');
    const first = leader.fetches[0].topics[0].partitions[0];
    assert.ok(first.partitionMaxBytes <= 200, `asked for ${first.partitionMaxBytes} bytes: the quota allows 100 ms at 2000 B/s`);
    await sleep(300);
    const copied = (await storedBatches(f)).reduce((sum, b) => sum + b.length, 0);
    const elapsedS = (performance.now() - startMs) / 1000;
    // An upper bound only: a slow machine copies less, never more. One batch may overshoot.
    assert.ok(copied <= rate * (elapsedS + 0.1) + 200, `${copied} bytes copied in ${elapsedS.toFixed(2)} s at ${rate} B/s`);
    assert.ok(f.logEndOffset < leaderLog.logEndOffset, 'the throttled copy is not done');
    rate = UNTHROTTLED_RATE;
    await until(() => f.logEndOffset === leaderLog.logEndOffset, 'the unthrottled copy to finish');
    await assertSameLog(f, leaderLog);
  } finally {
    await m.close();
  }
});
