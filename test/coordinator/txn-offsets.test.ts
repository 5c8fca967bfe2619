// Transactional offset commits on the group shard alone: pending until the producer's marker,
// applied on COMMIT and dropped on ABORT, kept apart per producer, invisible to require_stable
// fetches, rebuilt the same way by a replay, and ordered by the log as Kafka orders them (a plain
// commit written after the transactional one wins over it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/index.js';
import { GroupCoordinatorShard, defaultGroupConfig, type Effects, type GroupRecord } from '../../src/coordinator/index.js';

const client = { clientId: 'c', clientHost: '/127.0.0.1', apiVersion: 3 };
const parts = (offset: bigint) => [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] }];

class Harness {
  shard = new GroupCoordinatorShard({ ...defaultGroupConfig }, () => 'u');
  /** The log as the runtime would write it: [record, producer id or -1] and markers. */
  log: ({ record: GroupRecord; producerId: number } | { marker: number; commit: boolean })[] = [];
  constructor() { this.shard.onLoaded(0); }
  apply(e: Effects): void {
    const producerId = e.producer ? Number(e.producer.producerId) : -1;
    for (const r of e.records) { this.log.push({ record: r, producerId }); this.shard.replay(r, producerId); }
    for (const r of e.replies) r.send();
  }
  txnCommit(producerId: number, offset: bigint): void {
    this.apply(this.shard.txnCommitOffsets(0, { groupId: 'g', producerId: BigInt(producerId), producerEpoch: 0, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, topics: parts(offset) }, client, () => {}));
  }
  plainCommit(offset: bigint): void {
    this.apply(this.shard.commitOffsets(0, { groupId: 'g', generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1, topics: parts(offset) }, client, () => {}));
  }
  marker(producerId: number, commit: boolean): void { this.log.push({ marker: producerId, commit }); this.shard.replayTransactionMarker(producerId, commit); }
  fetch(requireStable = false): [bigint, number] {
    const p = this.shard.fetchOffsets('g', [{ name: 't', partitionIndexes: [0] }], undefined, requireStable).topics[0]!.partitions[0]!;
    return [p.committedOffset, p.errorCode];
  }
  /** A fresh shard loaded from this log gives the same answer. */
  replayed(): [bigint, number] {
    const h = new Harness();
    for (const e of this.log) {
      if ('marker' in e) h.shard.replayTransactionMarker(e.marker, e.commit);
      else h.shard.replay(e.record, e.producerId);
    }
    return h.fetch();
  }
}

test('a transactional offset commit is pending until COMMIT, gone on ABORT, separate per producer', () => {
  const h = new Harness();
  h.txnCommit(1, 10n);
  assert.deepEqual(h.fetch(), [-1n, 0]);
  assert.deepEqual(h.fetch(true), [-1n, ErrorCode.UNSTABLE_OFFSET_COMMIT]);
  h.txnCommit(2, 20n);
  h.marker(2, false);
  assert.deepEqual(h.fetch(true), [-1n, ErrorCode.UNSTABLE_OFFSET_COMMIT], 'producer 1 still pending');
  h.marker(1, true);
  assert.deepEqual(h.fetch(true), [10n, 0]);
  assert.deepEqual(h.replayed(), [10n, 0]);
});

test('log order decides between a plain and a transactional commit, as in Kafka', () => {
  const later = new Harness();
  later.txnCommit(1, 10n);
  later.plainCommit(99n); // written after the transactional record
  later.marker(1, true);
  assert.deepEqual(later.fetch(), [99n, 0]);
  assert.deepEqual(later.replayed(), [99n, 0]);

  const earlier = new Harness();
  earlier.plainCommit(99n);
  earlier.txnCommit(1, 10n);
  earlier.marker(1, true);
  assert.deepEqual(earlier.fetch(), [10n, 0]);
  assert.deepEqual(earlier.replayed(), [10n, 0]);
});
