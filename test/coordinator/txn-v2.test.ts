// Transaction version 2 (KIP-890 part 2) on the coordinator shard alone: every EndTxn v5 bumps the
// producer epoch and the markers carry the bumped one; the answer names the producer id and epoch
// the client continues with; a retried EndTxn is recognised by its epoch (also after a coordinator
// move); epoch exhaustion rolls over to a new producer id through nextProducerId; an abort with no
// transaction open; a timed-out version 2 transaction fences its producer for good.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/index.js';
import { encodeTxnRecord, type TxnRecordValue } from '../../src/coordinator/index.js';
import { TxnHarness, tp } from './txn-harness.js';

const TV2 = 2;
const states = (h: TxnHarness) => h.records().map((r) => r.value?.state ?? 'tombstone');

/** A log holding one transactional id in `value` (as a long-lived producer would have left it). */
function harnessWith(value: Partial<TxnRecordValue>): TxnHarness {
  const full: TxnRecordValue = {
    producerId: 1000n, lastProducerId: 1000n, nextProducerId: -1n, producerEpoch: 0, lastProducerEpoch: -1, txnTimeoutMs: 60_000, state: 'Empty',
    topicPartitions: [], txnStartTimestampMs: -1, txnLastUpdateTimestampMs: 20, clientTransactionVersion: TV2, ...value,
  };
  const h = new TxnHarness({}, 5, [encodeTxnRecord({ transactionalId: 't', value: full })]);
  h.nextProducerId = 2000n;
  return h;
}

test('EndTxn v5 commits under epoch + 1: the answer, the Prepare record and the markers carry it, the old epoch is fenced', () => {
  const h = new TxnHarness();
  const p = h.init();
  assert.deepEqual(p, { errorCode: 0, producerId: 1000n, producerEpoch: 0 });
  assert.equal(h.add(p, [tp('a', 0)], 't', TV2), 0);
  assert.equal(h.shard.txns.get('t')!.clientTransactionVersion, TV2);
  assert.deepEqual(h.endV2(p, true), { errorCode: 0, producerId: 1000n, producerEpoch: 1 });
  const prepare = h.records().at(-1)!.value!;
  assert.deepEqual([prepare.state, prepare.producerEpoch, prepare.clientTransactionVersion], ['PrepareCommit', 1, TV2]);
  assert.deepEqual(h.markers.map((m) => [m.result, m.producerId, m.producerEpoch, m.partitions]), [['commit', 1000n, 1, [tp('a', 0)]]]);
  // While the markers are out, a late write of the old epoch cannot join (PRODUCER_FENCED, the broker answers INVALID_PRODUCER_EPOCH).
  assert.equal(h.add(p, [tp('b', 0)], 't', TV2), ErrorCode.PRODUCER_FENCED);
  assert.deepEqual(h.writeMarkers(), [0]);
  assert.deepEqual([h.state(), h.shard.txns.get('t')!.producerEpoch], ['CompleteCommit', 1]);
  // Nor after: the old epoch cannot start the next transaction.
  assert.equal(h.add(p, [tp('b', 0)], 't', TV2), ErrorCode.PRODUCER_FENCED);
  // The continued producer runs the next transaction, and its abort bumps again.
  const next = { producerId: 1000n, producerEpoch: 1 };
  assert.equal(h.add(next, [tp('b', 0)], 't', TV2), 0);
  assert.deepEqual(h.endV2(next, false), { errorCode: 0, producerId: 1000n, producerEpoch: 2 });
  assert.equal(h.markers[0]!.producerEpoch, 2);
  h.writeMarkers();
  assert.deepEqual(states(h), ['Empty', 'Ongoing', 'PrepareCommit', 'CompleteCommit', 'Ongoing', 'PrepareAbort', 'CompleteAbort']);
});

test('a retried EndTxn v5 is recognised by the epoch below the current one, also after a coordinator move', () => {
  const h = new TxnHarness();
  const p = h.init();
  h.add(p, [tp('a', 0)], 't', TV2);
  assert.equal(h.endV2(p, true).errorCode, 0);
  // The answer was lost; the retry comes while the markers are still out.
  assert.deepEqual(h.endV2(p, true), { errorCode: ErrorCode.CONCURRENT_TRANSACTIONS, producerId: -1n, producerEpoch: -1 });
  assert.equal(h.endV2(p, false).errorCode, ErrorCode.INVALID_TXN_STATE);
  h.writeMarkers();
  // Done: the retry gets NONE and the epoch to continue with; the opposite outcome is refused.
  assert.deepEqual(h.endV2(p, true), { errorCode: 0, producerId: 1000n, producerEpoch: 1 });
  assert.equal(h.endV2(p, false).errorCode, ErrorCode.INVALID_TXN_STATE);
  // The same epoch again is not a retry but a new EndTxn: commit with nothing begun is refused.
  assert.equal(h.endV2({ producerId: 1000n, producerEpoch: 1 }, true).errorCode, ErrorCode.INVALID_TXN_STATE);
  // An epoch two behind is a zombie.
  const moved = h.reload();
  assert.deepEqual(moved.endV2(p, true), { errorCode: 0, producerId: 1000n, producerEpoch: 1 }, 'the new coordinator reads the epoch from the log');
  moved.add({ producerId: 1000n, producerEpoch: 1 }, [tp('a', 0)], 't', TV2);
  moved.endV2({ producerId: 1000n, producerEpoch: 1 }, true);
  moved.writeMarkers();
  assert.equal(moved.endV2(p, true).errorCode, ErrorCode.PRODUCER_FENCED);
  assert.equal(moved.endV2({ producerId: 999n, producerEpoch: 2 }, true).errorCode, ErrorCode.INVALID_PRODUCER_ID_MAPPING);
});

test('EndTxn v5 at the last usable epoch rolls over to a new producer id at epoch 0 (nextProducerId), retries and a move included', () => {
  const h = harnessWith({ producerEpoch: 32766, state: 'Ongoing', topicPartitions: [tp('a', 0)], txnStartTimestampMs: 10 });
  const old = { producerId: 1000n, producerEpoch: 32766 };
  assert.deepEqual(h.endV2(old, true), { errorCode: 0, producerId: 2000n, producerEpoch: 0 });
  const prepare = h.records().at(-1)!.value!;
  assert.deepEqual([prepare.state, prepare.producerId, prepare.producerEpoch, prepare.nextProducerId], ['PrepareCommit', 1000n, 32767, 2000n]);
  // The markers fence the old producer id at the top epoch.
  assert.deepEqual([h.markers[0]!.producerId, h.markers[0]!.producerEpoch], [1000n, 32767]);
  // The coordinator moves before the markers are written: the new one finishes, still rolling over.
  const moved = h.reload();
  h.markers.length = 0;
  assert.deepEqual(moved.writeMarkers(), [0]);
  const m = moved.shard.txns.get('t')!;
  assert.deepEqual([m.state, m.producerId, m.producerEpoch, m.lastProducerId, m.nextProducerId], ['CompleteCommit', 2000n, 0, 1000n, -1n]);
  // The retry of the EndTxn names the old producer id and its last epoch: answered with the new one.
  assert.deepEqual(moved.endV2(old, true), { errorCode: 0, producerId: 2000n, producerEpoch: 0 });
  assert.equal(moved.endV2(old, false).errorCode, ErrorCode.INVALID_TXN_STATE);
  // The old producer id cannot write; the new one can.
  assert.equal(moved.add(old, [tp('a', 0)], 't', TV2), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(moved.add({ producerId: 2000n, producerEpoch: 0 }, [tp('a', 0)], 't', TV2), 0);
  assert.deepEqual(moved.endV2({ producerId: 2000n, producerEpoch: 0 }, true), { errorCode: 0, producerId: 2000n, producerEpoch: 1 });
});

test('EndTxn v5 abort with no transaction open still bumps the epoch (no markers to write); commit is refused', () => {
  const h = new TxnHarness();
  const p = h.init();
  assert.equal(h.endV2(p, true).errorCode, ErrorCode.INVALID_TXN_STATE);
  assert.deepEqual(h.endV2(p, false), { errorCode: 0, producerId: 1000n, producerEpoch: 1 });
  assert.deepEqual(h.markers.map((m) => [m.result, m.partitions]), [['abort', []]]);
  h.writeMarkers();
  assert.equal(h.state(), 'CompleteAbort');
  // Again from CompleteAbort (current epoch): another bump; the previous one is now a retry.
  assert.deepEqual(h.endV2({ producerId: 1000n, producerEpoch: 1 }, false), { errorCode: 0, producerId: 1000n, producerEpoch: 2 });
  h.writeMarkers();
  assert.deepEqual(h.endV2({ producerId: 1000n, producerEpoch: 1 }, false), { errorCode: 0, producerId: 1000n, producerEpoch: 2 });
  assert.deepEqual(states(h), ['Empty', 'PrepareAbort', 'CompleteAbort', 'PrepareAbort', 'CompleteAbort']);
});

test('a timed-out version 2 transaction is aborted two epochs up: its producer is fenced, not answered as a retry', () => {
  const h = new TxnHarness({ abortTimedOutTransactionsIntervalMs: 1000 });
  const p = h.init('t', -1n, -1, 5000);
  h.add(p, [tp('a', 0)], 't', TV2);
  h.advance(7000);
  assert.equal(h.state(), 'PrepareAbort');
  assert.deepEqual([h.markers[0]!.result, h.markers[0]!.producerEpoch], ['abort', 2]);
  h.writeMarkers();
  assert.equal(h.endV2(p, false).errorCode, ErrorCode.PRODUCER_FENCED);
  assert.equal(h.add(p, [tp('a', 0)], 't', TV2), ErrorCode.PRODUCER_FENCED);
  // A new producer of the id carries on.
  assert.deepEqual(h.init('t', -1n, -1, 5000), { errorCode: 0, producerId: 1000n, producerEpoch: 3 });
});

test('version 1 clients are unchanged next to version 2: EndTxn v4 keeps the epoch, and a version 0 record loads as version 1', () => {
  const h = harnessWith({ clientTransactionVersion: 0, producerEpoch: 4 });
  const p = { producerId: 1000n, producerEpoch: 4 };
  assert.equal(h.add(p, [tp('a', 0)]), 0);
  assert.equal(h.end(p, true), 0);
  assert.deepEqual([h.markers[0]!.producerEpoch, h.shard.txns.get('t')!.producerEpoch], [4, 4]);
  h.writeMarkers();
  assert.equal(h.end(p, true), 0, 'the v1 retry of a completed commit');
  const v0 = new TxnHarness({ logValueVersion: 0 });
  const q = v0.init();
  v0.add(q, [tp('a', 0)]);
  v0.end(q, false);
  v0.writeMarkers();
  assert.ok(v0.written.every((w) => w.value === null || w.value.readInt16BE(0) === 0), 'version 0 values only');
  const reloaded = v0.reload();
  assert.deepEqual([reloaded.state(), reloaded.shard.txns.get('t')!.clientTransactionVersion, reloaded.shard.txns.get('t')!.nextProducerId], ['CompleteAbort', 0, -1n]);
});
