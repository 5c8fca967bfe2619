// The replica manager's side of tiered storage with the real ReplicaManager and storage logs and a
// scripted remote tier: consumer reads below the local log start go to the tier (one partition per
// fetch, bounded by remote.fetch.max.wait.ms), a follower there is told
// OFFSET_MOVED_TO_TIERED_STORAGE, and ListOffsets answers EARLIEST / EARLIEST_LOCAL / LATEST_TIERED.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplicaManager, type ReplicaDeltaPorts, type StorageLog } from '../../src/replication/index.js';
import { metadataRecord, type MetadataRecord } from '../../src/metadata/index.js';
import { buildRecordBatchSync, iterateBatches, iterateRecords } from '../../src/records/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import type { RemoteLogManager, TopicIdPartition } from '../../src/tiered/index.js';
import { ManualTime, registerBrokerRecord, storageLog, metadataApplier } from './helpers.js';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

/** A remote tier that answers each read with one batch at the offset asked, after `delayMs` of manual time. */
function scriptedTier(time: ManualTime, delayMs = 0) {
  const reads: { tip: TopicIdPartition; offset: number }[] = [];
  const tier = {
    onLeader: () => {}, onFollower: () => {}, onNotLeader: () => {},
    read: (tip: TopicIdPartition, _log: unknown, offset: number) => {
      reads.push({ tip, offset });
      const bytes = buildRecordBatchSync({ records: [{ key: null, value: Buffer.from(`remote-${offset}`), timestamp: 0 }], baseOffset: offset });
      return delayMs === 0 ? Promise.resolve(bytes) : new Promise<Buffer>((resolve) => time.schedule(delayMs, () => resolve(bytes)));
    },
    abortedTransactions: async () => [],
  };
  return { reads, tier: tier as unknown as RemoteLogManager };
}

async function tieredLeader(delayMs = 0) {
  const time = new ManualTime();
  const rm = new ReplicaManager(1, time, time, { fetchPurgatoryOperationsMax: 100, producePurgatoryOperationsMax: 100 });
  const logs = new Map<number, StorageLog>();
  const ports: ReplicaDeltaPorts = {
    openLog: async (_topic, partition) => {
      const log = storageLog({ remoteStorageEnable: true, segmentBytes: 300, localRetentionBytes: 0, fileDeleteDelayMs: 0 }, time);
      logs.set(partition, log);
      return log;
    },
    deleteLog: async () => {}, topicConfig: () => ({ minInsyncReplicas: 1, maxMessageBytes: undefined }),
  };
  const { reads, tier } = scriptedTier(time, delayMs);
  rm.remoteLog = tier;
  rm.remoteFetchMaxWaitMs = 500;
  await metadataApplier(rm, ports)(
    registerBrokerRecord(1, 100n, false, null), registerBrokerRecord(2, 200n, false, null),
    metadataRecord('TopicRecord', { name: 't', topicId: TOPIC_ID }) as MetadataRecord,
    ...[0, 1].map((partitionId) => metadataRecord('PartitionRecord', { partitionId, topicId: TOPIC_ID, replicas: [1, 2], isr: [1], leader: 1, leaderEpoch: 0, partitionEpoch: 0 }) as MetadataRecord),
  );
  for (const [partition, log] of logs) {
    for (let i = 0; i < 20; i++) {
      const out = await rm.produce(1, 1000, [{ topic: 't', partition, records: buildRecordBatchSync({ records: [0, 1, 2].map((j) => ({ key: null, value: Buffer.from(`v${j}`), timestamp: time.nowMs() })) }) }]);
      assert.equal([...out.values()][0]!.errorCode, 0, [...out.values()][0]!.errorMessage ?? '');
    }
    // Copied up to the last rolled segment, then local retention: the local log starts at the active segment.
    const pl = log.tieredLog;
    pl.highestOffsetInRemoteStorage = pl.activeSegment.baseOffset - 1;
    pl.deleteOldSegments(time.nowMs());
    assert.ok(pl.localLogStartOffset > 0 && pl.logStartOffset === 0);
  }
  const fetch = (offset: number, partitions = [0, 1], replicaId = -1) => rm.fetch({
    replicaId, replicaEpoch: replicaId === 2 ? 200n : -1n, maxWaitMs: 0, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0,
    partitions: partitions.map((partition) => ({ topic: 't', partition, fetchOffset: BigInt(offset), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 })),
  });
  return { rm, logs, time, reads, fetch };
}

const values = (records: Buffer | null): string[] => records === null ? [] : [...iterateBatches(records)].flatMap((v) => [...iterateRecords(v, v.body())].map((r) => r.value!.toString()));

test('a consumer below the local log start is served from the tier, one partition per fetch', async () => {
  const h = await tieredLeader();
  const [a, b] = await h.fetch(0);
  assert.equal(a!.errorCode, 0);
  assert.deepEqual(values(a!.records), ['remote-0'], 'the first partition is read from the tier');
  assert.equal(b!.errorCode, 0);
  assert.equal(b!.records, null, 'the second waits for a later fetch');
  assert.deepEqual(h.reads.map((r) => [r.tip.partition, r.offset]), [[0, 0]]);
  const local = h.logs.get(1)!.localLogStartOffset;
  const [c] = await h.fetch(local, [1]);
  assert.ok(c!.records !== null && c!.records.length > 0, 'at the local log start the disk serves');
  assert.equal(h.reads.length, 1);
});

test('a follower below the leader\'s local log start gets OFFSET_MOVED_TO_TIERED_STORAGE', async () => {
  const h = await tieredLeader();
  const [r] = await h.fetch(0, [0], 2);
  assert.equal(r!.errorCode, ErrorCode.OFFSET_MOVED_TO_TIERED_STORAGE);
  assert.equal(h.reads.length, 0);
});

test('a remote read slower than remote.fetch.max.wait.ms is answered without records', async () => {
  const h = await tieredLeader(2_000);
  const pending = h.fetch(0, [0]);
  await new Promise((r) => setImmediate(r));
  h.time.advance(500);
  const [r] = await pending;
  assert.equal(r!.errorCode, 0);
  assert.equal(r!.records, null);
});

test('ListOffsets: EARLIEST is the log start, EARLIEST_LOCAL the local log start, LATEST_TIERED the highest copied offset', async () => {
  const h = await tieredLeader();
  const log = h.logs.get(0)!.tieredLog;
  const at = async (ts: bigint) => (await h.rm.listOffsets('t', 0, ts, -1)).offset;
  assert.equal(await at(-2n), 0n);
  assert.equal(await at(-4n), BigInt(log.localLogStartOffset));
  assert.equal(await at(-5n), BigInt(log.highestOffsetInRemoteStorage));
  assert.equal(await at(-1n), BigInt(log.logEndOffset));
});
