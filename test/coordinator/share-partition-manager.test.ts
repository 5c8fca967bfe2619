// The share-partition leader's manager over test doubles at its ports (the share coordinator, the
// log, time): how many state writes a ShareFetch costs, and what records it hands out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SharePartitionManager, type ShareGroupSettings, type StateBatch } from '../../src/coordinator/index.js';
import { buildRecordBatchSync, iterateBatches } from '../../src/records/index.js';
import { ErrorCode } from '../../src/protocol/index.js';

const settings: ShareGroupSettings = {
  recordLockDurationMs: 30_000, deliveryCountLimit: 5, maxInFlightRecords: 200, autoOffsetReset: 'earliest', isolationLevel: 0,
  deadLetterTopic: null, deadLetterCopyRecord: false,
};
const P = { topicId: 'AAAAAAAAAAAAAAAAAAAAAA', topic: 't', partition: 0 };
const OPTS = { maxBytes: 8 << 20, maxRecords: 4, maxWaitMs: 0 };

/** A partition of three batches of four records (offsets 0-11), and a share coordinator that records what it is asked to write. */
function setup() {
  const log = Buffer.concat([0, 4, 8].map((baseOffset) => buildRecordBatchSync({ baseOffset, records: Array.from({ length: 4 }, (_, i) => ({ value: Buffer.from(`r${baseOffset + i}`) })) })));
  const writes: { startOffset: number; stateBatches: StateBatch[] }[] = [];
  const reads: number[] = [];
  const manager = new SharePartitionManager({
    clock: { nowMs: () => 1000 },
    scheduler: { schedule: () => ({ cancel() {} }) },
    warn: () => {},
    settings: () => settings,
    deadLetters: { write: async () => ErrorCode.NONE },
    persister: {
      read: async () => ({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION }),
      initialize: async () => ErrorCode.NONE,
      write: async (p) => { writes.push({ startOffset: p.startOffset, stateBatches: p.stateBatches.map((b) => ({ ...b })) }); return ErrorCode.NONE; },
    },
    log: {
      leaderEpoch: () => 0,
      bounds: () => ({ logStartOffset: 0, highWatermark: 12 }),
      offsetForTimestamp: async () => null,
      // Whole batches from the one holding `offset` to the end, as a fetch from the log reads them.
      read: async (_t, _p, offset, maxBytes) => {
        reads.push(maxBytes);
        const from = [...iterateBatches(log)].find((b) => b.lastOffset >= offset);
        return { errorCode: 0, records: from ? log.subarray(from.offset) : Buffer.alloc(0), abortedTransactions: [] };
      },
    },
  });
  return { manager, writes, reads };
}

test('a ShareFetch hands out only the batches holding the records it acquired, not everything the log read returned', async () => {
  const { manager, reads } = setup();
  const [r] = await manager.fetch('g', 'm1', [P], OPTS);
  assert.deepEqual(r!.acquired, [{ firstOffset: 0, lastOffset: 3, deliveryCount: 1 }]);
  assert.deepEqual([...iterateBatches(r!.records!)].map((b) => [b.baseOffset, b.lastOffset]), [[0, 3]], 'one batch of the three read');
  // The log is read for what MaxRecords can take at the size records had, not for MaxBytes (8 MiB).
  await manager.fetch('g', 'm1', [P], OPTS);
  assert.deepEqual(reads, [1 << 20, 64 << 10], 'the first read takes 1 MiB, the next the least a read asks for (4 records of ~80 bytes)');
  manager.close();
});

test('a ShareFetch carrying acknowledgements writes the share-partition state once, with the acknowledgements and the new acquisition', async () => {
  const { manager, writes } = setup();
  await manager.fetch('g', 'm1', [P], OPTS);
  assert.equal(writes.length, 1, 'the first acquisition is written');
  const [r] = await manager.fetch('g', 'm1', [{ ...P, acknowledgements: [{ firstOffset: 0, lastOffset: 3, acknowledgeTypes: [1] }] }], OPTS);
  assert.equal(r!.acknowledgeErrorCode, ErrorCode.NONE);
  assert.deepEqual(r!.acquired, [{ firstOffset: 4, lastOffset: 7, deliveryCount: 1 }]);
  assert.equal(writes.length, 2, 'one write for the acknowledgements and the acquisition together');
  assert.deepEqual(writes[1], { startOffset: 4, stateBatches: [{ firstOffset: 4, lastOffset: 7, deliveryState: 0, deliveryCount: 1 }] });
  // Acknowledgements of records this member does not hold are refused, all of them, and the fetch still acquires.
  const [bad] = await manager.fetch('g', 'm1', [{ ...P, acknowledgements: [{ firstOffset: 0, lastOffset: 5, acknowledgeTypes: [1] }] }], OPTS);
  assert.equal(bad!.acknowledgeErrorCode, ErrorCode.INVALID_RECORD_STATE);
  assert.deepEqual(bad!.acquired, [{ firstOffset: 8, lastOffset: 11, deliveryCount: 1 }]);
  assert.equal(writes.length, 3);
  assert.equal(writes[2]!.startOffset, 4, 'nothing of the refused acknowledgement was applied');
  // Acknowledgements with nothing left to acquire are still written, once.
  const [last] = await manager.fetch('g', 'm1', [{ ...P, acknowledgements: [{ firstOffset: 4, lastOffset: 11, acknowledgeTypes: [1] }] }], OPTS);
  assert.equal(last!.acknowledgeErrorCode, ErrorCode.NONE);
  assert.deepEqual(last!.acquired, []);
  assert.equal(writes.length, 4);
  assert.deepEqual(writes[3], { startOffset: 12, stateBatches: [] });
  manager.close();
});

/**
 * A partition whose log grows when the test appends, a clock the test moves and a scheduler it
 * fires: what a waiting ShareFetch does when it is woken.
 */
function growingSetup() {
  let log = Buffer.alloc(0);
  let nowMs = 1000;
  const timers: { at: number; fn: () => void; cancelled: boolean }[] = [];
  const appendWaits: (() => void)[] = [];
  const readFrom = (offset: number) => {
    const from = [...iterateBatches(log)].find((b) => b.lastOffset >= offset);
    return from ? log.subarray(from.offset) : null;
  };
  const manager = new SharePartitionManager({
    clock: { nowMs: () => nowMs },
    scheduler: { schedule: (ms, fn) => { const t = { at: nowMs + ms, fn, cancelled: false }; timers.push(t); return { cancel() { t.cancelled = true; } }; } },
    warn: () => {},
    settings: () => settings,
    deadLetters: { write: async () => ErrorCode.NONE },
    persister: { read: async () => ({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION }), initialize: async () => ErrorCode.NONE, write: async () => ErrorCode.NONE },
    log: {
      leaderEpoch: () => 0,
      bounds: () => ({ logStartOffset: 0, highWatermark: [...iterateBatches(log)].at(-1)?.lastOffset ?? 0 }),
      offsetForTimestamp: async () => null,
      // A read with a wait returns when the log has records at `offset`: now, or at the next append.
      read: async (_t, _p, offset, _maxBytes, _iso, maxWaitMs) => {
        let records = readFrom(offset);
        if (records === null && maxWaitMs > 0) {
          await new Promise<void>((resolve) => appendWaits.push(resolve));
          records = readFrom(offset);
        }
        return { errorCode: 0, records: records ?? Buffer.alloc(0), abortedTransactions: [] };
      },
    },
  });
  const append = (baseOffset: number, n: number) => {
    log = Buffer.concat([log, buildRecordBatchSync({ baseOffset, records: Array.from({ length: n }, (_, i) => ({ value: Buffer.from(`r${baseOffset + i}`) })) })]);
    for (const w of appendWaits.splice(0)) w();
  };
  const advance = (ms: number) => {
    nowMs += ms;
    for (const t of timers.splice(0)) if (!t.cancelled && t.at <= nowMs) t.fn(); else if (!t.cancelled) timers.push(t);
  };
  return { manager, append, advance };
}

const settled = async <T>(p: Promise<T>): Promise<boolean> => {
  let done = false;
  void p.then(() => { done = true; }, () => { done = true; });
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  return done;
};

test('a waiting ShareFetch woken by another member\'s acknowledgement with nothing to acquire keeps waiting, and takes the next append', async () => {
  const { manager, append, advance } = growingSetup();
  append(0, 4);
  const [taken] = await manager.fetch('g', 'm2', [P], OPTS);
  assert.deepEqual(taken!.acquired, [{ firstOffset: 0, lastOffset: 3, deliveryCount: 1 }]);
  // m1 finds nothing and waits (500 ms); m2's accept wakes it, but there is still nothing for it.
  const waiting = manager.fetch('g', 'm1', [P], { ...OPTS, maxWaitMs: 500 });
  assert.equal(await settled(waiting), false, 'waits: nothing to acquire');
  assert.equal(await manager.acknowledge('g', 'm2', P, [{ firstOffset: 0, lastOffset: 3, acknowledgeTypes: [1] }]), ErrorCode.NONE);
  assert.equal(await settled(waiting), false, 'still waiting after a wake-up that found nothing (it used to answer empty at once)');
  advance(100);
  append(4, 4);
  const [got] = await waiting;
  assert.deepEqual(got!.acquired, [{ firstOffset: 4, lastOffset: 7, deliveryCount: 1 }], 'the append within MaxWaitMs is acquired by the waiting fetch');
  // With nothing coming, the wait ends at MaxWaitMs, empty.
  const empty = manager.fetch('g', 'm1', [P], { ...OPTS, maxWaitMs: 500 });
  assert.equal(await settled(empty), false);
  advance(499);
  assert.equal(await settled(empty), false, 'not before MaxWaitMs');
  advance(1);
  assert.deepEqual((await empty)[0]!.acquired, []);
  manager.close();
});
