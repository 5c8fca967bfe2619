// Remote log metadata as a state machine: Kafka's transitions, its cache's answers in the
// duplicate and overlapping-copy cases, snapshots that rebuild the state exactly, refused events
// that change nothing, and Kafka's record format.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  RemoteLogSegmentState as S, RemotePartitionDeleteState as P, RemotePartitionMetadataStore, RemoteLogMetadataError,
  isValidSegmentTransition, encodeRemoteLogMetadata, decodeRemoteLogMetadata, encodeSegmentSnapshotRecord, decodeSegmentSnapshotRecord,
  RemoteLogMetadataRecordType,
  type RemoteLogMetadataEvent, type RemoteLogSegmentMetadata, type TopicIdPartition, type RemoteLogSegmentState,
} from '../../src/tiered/index.js';

const TP: TopicIdPartition = { topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', topic: 'orders', partition: 0 };
const TP1: TopicIdPartition = { ...TP, partition: 1 };
const uuidOf = (i: number): string => Buffer.alloc(16, i + 1).toString('base64url');
const IDS = [0, 1, 2, 3, 4, 5].map(uuidOf);

function seg(id: string, start: number, end: number, epochs: [number, number][], p = TP): RemoteLogSegmentMetadata {
  return {
    remoteLogSegmentId: { topicIdPartition: p, id }, startOffset: start, endOffset: end, maxTimestampMs: 1, brokerId: 0, eventTimestampMs: 0,
    segmentLeaderEpochs: epochs.map(([leaderEpoch, startOffset]) => ({ leaderEpoch, startOffset })), segmentSizeInBytes: 100, customMetadata: null,
    state: S.COPY_SEGMENT_STARTED,
  };
}
const added = (m: RemoteLogSegmentMetadata): RemoteLogMetadataEvent => ({ kind: 'segment', metadata: m });
const update = (id: string, state: RemoteLogSegmentState, p = TP): RemoteLogMetadataEvent =>
  ({ kind: 'segment-update', update: { remoteLogSegmentId: { topicIdPartition: p, id }, brokerId: 0, eventTimestampMs: 1, customMetadata: null, state } });

function copied(store: RemotePartitionMetadataStore, m: RemoteLogSegmentMetadata): void {
  store.replay(added(m));
  store.replay(update(m.remoteLogSegmentId.id, S.COPY_SEGMENT_FINISHED, m.remoteLogSegmentId.topicIdPartition));
}

describe('RemoteLogSegmentState transitions', () => {
  it('are Kafka\'s: start, finish or abandon a copy, finish a delete; repeats allowed', () => {
    const valid = new Set(['none>0', '0>0', '0>1', '0>2', '1>1', '1>2', '2>2', '2>3', '3>3']);
    for (const from of [null, 0, 1, 2, 3] as const) {
      for (const to of [0, 1, 2, 3] as const) {
        assert.equal(isValidSegmentTransition(from, to), valid.has(`${from ?? 'none'}>${to}`), `${from} -> ${to}`);
      }
    }
  });

  it('an invalid transition is refused with a typed error and changes nothing', () => {
    const store = new RemotePartitionMetadataStore();
    copied(store, seg(IDS[0]!, 0, 9, [[0, 0]]));
    const before = store.snapshot();
    assert.throws(() => store.replay(update(IDS[0]!, S.DELETE_SEGMENT_FINISHED)), (e: unknown) => e instanceof RemoteLogMetadataError && e.code === 'INVALID_TRANSITION');
    assert.throws(() => store.replay(update(IDS[0]!, S.COPY_SEGMENT_STARTED)), (e: unknown) => e instanceof RemoteLogMetadataError && e.code === 'INVALID_TRANSITION');
    assert.throws(() => store.replay(update(IDS[1]!, S.COPY_SEGMENT_FINISHED)), (e: unknown) => e instanceof RemoteLogMetadataError && e.code === 'UNKNOWN_SEGMENT');
    assert.throws(() => store.replay(added({ ...seg(IDS[2]!, 0, 9, [[0, 0]]), state: S.COPY_SEGMENT_FINISHED })), RemoteLogMetadataError);
    assert.throws(() => store.replay(added(seg(IDS[2]!, 9, 0, [[0, 9]]))), (e: unknown) => e instanceof RemoteLogMetadataError && e.code === 'INVALID_METADATA');
    assert.deepEqual(store.snapshot(), before);
  });
});

describe('RemoteLogMetadataCache queries', () => {
  it('only finished copies are readable; every live segment is listed for cleanup', () => {
    const store = new RemotePartitionMetadataStore();
    store.replay(added(seg(IDS[0]!, 0, 99, [[0, 0]])));
    assert.equal(store.remoteLogSegmentMetadata(TP, 0, 50), undefined);
    assert.equal(store.listRemoteLogSegments(TP, 0).length, 1);
    store.replay(update(IDS[0]!, S.COPY_SEGMENT_FINISHED));
    assert.equal(store.remoteLogSegmentMetadata(TP, 0, 50)?.remoteLogSegmentId.id, IDS[0]);
    assert.equal(store.highestOffsetForEpoch(TP, 0), 99);
    store.replay(update(IDS[0]!, S.DELETE_SEGMENT_STARTED));
    assert.equal(store.remoteLogSegmentMetadata(TP, 0, 50), undefined);
    assert.equal(store.listRemoteLogSegments(TP).length, 1);
    store.replay(update(IDS[0]!, S.DELETE_SEGMENT_FINISHED));
    assert.deepEqual(store.listRemoteLogSegments(TP), []);
    assert.equal(store.highestOffsetForEpoch(TP, 0), 99, 'Kafka keeps the highest copied offset after deletion');
  });

  it('a segment spanning epochs answers each epoch only within that epoch\'s offsets', () => {
    const store = new RemotePartitionMetadataStore();
    copied(store, seg(IDS[0]!, 0, 99, [[0, 0], [2, 40]]));
    assert.equal(store.remoteLogSegmentMetadata(TP, 0, 39)?.remoteLogSegmentId.id, IDS[0]);
    assert.equal(store.remoteLogSegmentMetadata(TP, 0, 40), undefined);
    assert.equal(store.remoteLogSegmentMetadata(TP, 2, 40)?.remoteLogSegmentId.id, IDS[0]);
    assert.equal(store.remoteLogSegmentMetadata(TP, 1, 40), undefined);
    assert.equal(store.highestOffsetForEpoch(TP, 0), 39);
    assert.equal(store.highestOffsetForEpoch(TP, 2), 99);
  });

  it('a new leader\'s copy of a range already copied replaces the old one (Kafka\'s duplicate case)', () => {
    const store = new RemotePartitionMetadataStore();
    copied(store, seg(IDS[0]!, 0, 100, [[0, 0]]));
    copied(store, seg(IDS[1]!, 0, 200, [[0, 0]]));
    assert.equal(store.remoteLogSegmentMetadata(TP, 0, 50)?.remoteLogSegmentId.id, IDS[1]);
    assert.deepEqual(store.listRemoteLogSegments(TP, 0).map((m) => m.remoteLogSegmentId.id).sort(), [IDS[0], IDS[1]], 'the old copy stays listed for cleanup');
  });

  it('overlapping copies: the offset is served by the later leader\'s segment (Kafka\'s overlap case)', () => {
    const store = new RemotePartitionMetadataStore();
    copied(store, seg(IDS[0]!, 10, 90, [[0, 10]]));
    copied(store, seg(IDS[1]!, 5, 100, [[0, 5]]));
    copied(store, seg(IDS[2]!, 101, 200, [[0, 101]]));
    assert.equal(store.remoteLogSegmentMetadata(TP, 0, 95)?.remoteLogSegmentId.id, IDS[1]);
    assert.equal(store.remoteLogSegmentMetadata(TP, 0, 50)?.remoteLogSegmentId.id, IDS[1]);
    assert.equal(store.remoteLogSegmentMetadata(TP, 0, 150)?.remoteLogSegmentId.id, IDS[2]);
  });

  it('the remote log start offset is the first segment of the earliest epoch that has one', () => {
    const store = new RemotePartitionMetadataStore();
    copied(store, seg(IDS[0]!, 30, 59, [[1, 30]]));
    copied(store, seg(IDS[1]!, 60, 99, [[2, 60]]));
    assert.equal(store.partition(TP)!.remoteLogStartOffset([0, 1, 2]), 30);
    store.replay(update(IDS[0]!, S.DELETE_SEGMENT_STARTED));
    store.replay(update(IDS[0]!, S.DELETE_SEGMENT_FINISHED));
    assert.equal(store.partition(TP)!.remoteLogStartOffset([0, 1, 2]), 60);
  });

  it('partition deletion moves forward only and, finished, forgets the partition', () => {
    const store = new RemotePartitionMetadataStore();
    copied(store, seg(IDS[0]!, 0, 9, [[0, 0]]));
    const del = (state: P): RemoteLogMetadataEvent => ({ kind: 'partition-delete', metadata: { topicIdPartition: TP, brokerId: 0, eventTimestampMs: 5, state } });
    store.replay(del(P.DELETE_PARTITION_STARTED));
    assert.throws(() => store.replay(del(P.DELETE_PARTITION_MARKED)), RemoteLogMetadataError);
    store.replay(del(P.DELETE_PARTITION_FINISHED));
    assert.equal(store.partition(TP), undefined);
    assert.equal(store.partitionDeleteMetadata(TP), undefined);
    assert.throws(() => store.replay(update(IDS[0]!, S.DELETE_SEGMENT_STARTED)), (e: unknown) => e instanceof RemoteLogMetadataError && e.code === 'UNKNOWN_PARTITION');
  });
});

// Random event sequences over a few partitions and segment ids, valid and invalid alike.
const partitionArb = fc.constantFrom(TP, TP1);
const segmentArb = fc.record({
  p: partitionArb, id: fc.constantFrom(...IDS), start: fc.integer({ min: 0, max: 60 }), len: fc.integer({ min: 0, max: 30 }),
  epoch: fc.integer({ min: 0, max: 3 }), second: fc.option(fc.tuple(fc.integer({ min: 1, max: 2 }), fc.integer({ min: 0, max: 30 }))),
}).map(({ p, id, start, len, epoch, second }): RemoteLogMetadataEvent => {
  const epochs: [number, number][] = [[epoch, start]];
  if (second !== null) epochs.push([epoch + second[0], start + Math.min(second[1], len)]);
  return added(seg(id, start, start + len, epochs, p));
});
const eventArb: fc.Arbitrary<RemoteLogMetadataEvent> = fc.oneof(
  { arbitrary: segmentArb, weight: 2 },
  { arbitrary: fc.tuple(fc.constantFrom(...IDS), fc.constantFrom(S.COPY_SEGMENT_FINISHED, S.COPY_SEGMENT_FINISHED, S.DELETE_SEGMENT_STARTED, S.DELETE_SEGMENT_FINISHED, S.COPY_SEGMENT_STARTED), partitionArb).map(([id, s, p]) => update(id, s, p)), weight: 4 },
  { arbitrary: fc.tuple(partitionArb, fc.constantFrom(P.DELETE_PARTITION_MARKED, P.DELETE_PARTITION_STARTED, P.DELETE_PARTITION_FINISHED)).map(([p, state]): RemoteLogMetadataEvent => ({ kind: 'partition-delete', metadata: { topicIdPartition: p, brokerId: 1, eventTimestampMs: 2, state } })), weight: 1 },
);

/** Replays, noting which events were refused (by code); anything but a RemoteLogMetadataError fails the test. */
function replayAll(store: RemotePartitionMetadataStore, events: readonly RemoteLogMetadataEvent[]): string[] {
  return events.map((e) => {
    try { store.replay(e); return 'ok'; } catch (err) {
      if (!(err instanceof RemoteLogMetadataError)) throw err;
      return err.code;
    }
  });
}

describe('RemotePartitionMetadataStore replay', () => {
  it('a snapshot then the rest gives the same state (and the same refusals) as replaying everything', () => {
    fc.assert(fc.property(fc.array(eventArb, { maxLength: 60 }), fc.nat(), (events, cut) => {
      const k = events.length === 0 ? 0 : cut % (events.length + 1);
      const whole = new RemotePartitionMetadataStore();
      const outcomes = replayAll(whole, events);
      const prefix = new RemotePartitionMetadataStore();
      replayAll(prefix, events.slice(0, k));
      const resumed = RemotePartitionMetadataStore.fromSnapshot(structuredClone(prefix.snapshot()));
      assert.deepEqual(resumed.snapshot(), prefix.snapshot());
      assert.deepEqual(replayAll(resumed, events.slice(k)), outcomes.slice(k));
      assert.deepEqual(resumed.snapshot(), whole.snapshot());
    }), { numRuns: 300 });
  });

  it('a refused event leaves the state exactly as it was', () => {
    fc.assert(fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
      const store = new RemotePartitionMetadataStore();
      for (const e of events) {
        const before = store.snapshot();
        try { store.replay(e); } catch (err) {
          assert.ok(err instanceof RemoteLogMetadataError);
          assert.deepEqual(store.snapshot(), before);
        }
      }
    }), { numRuns: 300 });
  });

  it('with copies that never overlap, (epoch, offset) finds the one finished copy holding that offset in that epoch', () => {
    // Segments tile offsets [0, 10n); each is copied or not, then maybe deleted; epochs change every few segments.
    fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.boolean()), { minLength: 1, maxLength: 12 }), (plan) => {
      const store = new RemotePartitionMetadataStore();
      const finished: RemoteLogSegmentMetadata[] = [];
      plan.forEach(([fate, epochBump], i) => {
        const m = seg(uuidOf(i), i * 10, i * 10 + 9, [[Math.floor(i / 3) + (epochBump ? 1 : 0), i * 10]]);
        store.replay(added(m));
        if (fate >= 1) store.replay(update(m.remoteLogSegmentId.id, S.COPY_SEGMENT_FINISHED));
        if (fate === 2) { store.replay(update(m.remoteLogSegmentId.id, S.DELETE_SEGMENT_STARTED)); } else if (fate === 1) finished.push(m);
      });
      for (let offset = 0; offset < plan.length * 10; offset++) {
        for (let epoch = 0; epoch <= 5; epoch++) {
          const expected = finished.find((m) => m.startOffset <= offset && offset <= m.endOffset && m.segmentLeaderEpochs[0]!.leaderEpoch === epoch);
          assert.equal(store.remoteLogSegmentMetadata(TP, epoch, offset)?.remoteLogSegmentId.id, expected?.remoteLogSegmentId.id, `epoch ${epoch} offset ${offset}`);
        }
      }
    }), { numRuns: 200 });
  });
});

describe('__remote_log_metadata records', () => {
  it('every event survives encode and decode', () => {
    fc.assert(fc.property(eventArb, fc.option(fc.uint8Array({ maxLength: 20 })), (event, custom) => {
      const e: RemoteLogMetadataEvent = event.kind === 'segment' ? { kind: 'segment', metadata: { ...event.metadata, customMetadata: custom === null ? null : Buffer.from(custom) } } : event;
      assert.deepEqual(decodeRemoteLogMetadata(encodeRemoteLogMetadata(e)), e);
    }));
  });

  it('are framed as Kafka\'s RemoteLogMetadataSerde frames them: frame version 1, api key, version 0', () => {
    const m = seg(IDS[0]!, 0, 9, [[0, 0]]);
    assert.deepEqual([...encodeRemoteLogMetadata(added(m)).subarray(0, 3)], [1, 0, 0]);
    assert.deepEqual([...encodeRemoteLogMetadata(update(IDS[0]!, S.COPY_SEGMENT_FINISHED)).subarray(0, 3)], [1, 1, 0]);
    assert.equal(RemoteLogMetadataRecordType.RemotePartitionDeleteMetadataRecord, 2);
    assert.equal(RemoteLogMetadataRecordType.RemoteLogSegmentMetadataSnapshotRecord, 3);
    const snap = { ...m, state: S.COPY_SEGMENT_FINISHED };
    assert.deepEqual(decodeSegmentSnapshotRecord(encodeSegmentSnapshotRecord(snap), TP), snap);
  });

  it('garbage is refused with a typed error, never a crash', () => {
    const good = encodeRemoteLogMetadata(added(seg(IDS[0]!, 0, 9, [[0, 0]])));
    fc.assert(fc.property(fc.nat({ max: good.length - 1 }), fc.integer({ min: 0, max: 255 }), fc.nat({ max: good.length }), (at, byte, cut) => {
      const bad = Buffer.from(good);
      bad[at] = byte;
      for (const input of [bad, good.subarray(0, cut)]) {
        try { decodeRemoteLogMetadata(input); } catch (e) { assert.ok(e instanceof RemoteLogMetadataError, String(e)); }
      }
    }));
  });
});
