// The transaction coordinator state machine on the shard alone, with a simulated clock: the commit
// and abort paths with their markers, fencing, InitProducerId during an open transaction, the
// errors Kafka answers where it answers them, timeouts, expiration, and a reload mid-commit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode } from '../../src/protocol/index.js';
import { encodeTxnRecord, fencedErrorForVersion, partitionForTransactionalId, txnAppendError } from '../../src/coordinator/index.js';
import { TxnHarness, tp } from './txn-harness.js';

const ids = (h: TxnHarness) => h.records().map((r) => r.value?.state ?? 'tombstone');

test('a new transactional id gets a fresh producer id at epoch 0, written as an Empty record', () => {
  const h = new TxnHarness();
  const r = h.init('t');
  assert.deepEqual(r, { errorCode: 0, producerId: 1000n, producerEpoch: 0 });
  assert.equal(h.state(), 'Empty');
  assert.deepEqual(ids(h), ['Empty']);
});

test('commit path: Empty → Ongoing → PrepareCommit → markers → CompleteCommit', () => {
  const h = new TxnHarness();
  const p = h.init();
  h.now += 5;
  assert.equal(h.add(p, [tp('b', 1), tp('a', 0)]), 0);
  assert.equal(h.state(), 'Ongoing');
  const started = h.shard.txns.get('t')!;
  assert.equal(started.txnStartTimestampMs, h.now);
  assert.deepEqual(started.topicPartitions, [tp('a', 0), tp('b', 1)]);
  // Already in the transaction: answered at once, nothing written.
  const before = h.written.length;
  assert.equal(h.add(p, [tp('a', 0)]), 0);
  assert.equal(h.written.length, before);
  assert.equal(h.addOffsets(p, 'g', 7), 0);
  assert.equal(h.end(p, true), 0);
  assert.equal(h.state(), 'PrepareCommit');
  assert.equal(h.markers.length, 1);
  assert.deepEqual(h.markers[0], {
    transactionalId: 't', producerId: 1000n, producerEpoch: 0, result: 'commit', coordinatorEpoch: 5,
    partitions: [tp('__consumer_offsets', 7), tp('a', 0), tp('b', 1)],
  });
  assert.deepEqual(h.writeMarkers(), [0]);
  assert.equal(h.state(), 'CompleteCommit');
  assert.deepEqual(h.shard.txns.get('t')!.topicPartitions, []);
  assert.deepEqual(ids(h), ['Empty', 'Ongoing', 'Ongoing', 'PrepareCommit', 'CompleteCommit']);
  // A retried EndTxn(commit) is answered NONE; an abort now is INVALID_TXN_STATE.
  assert.equal(h.end(p, true), 0);
  assert.equal(h.end(p, false), ErrorCode.INVALID_TXN_STATE);
  // The next transaction starts from CompleteCommit.
  assert.equal(h.add(p, [tp('c', 0)]), 0);
  assert.equal(h.state(), 'Ongoing');
});

test('abort path: PrepareAbort, then CompleteAbort once the markers are written', () => {
  const h = new TxnHarness();
  const p = h.init();
  h.add(p, [tp('a', 0)]);
  assert.equal(h.end(p, false), 0);
  assert.equal(h.state(), 'PrepareAbort');
  assert.equal(h.markers[0]!.result, 'abort');
  assert.equal(h.end(p, false), ErrorCode.CONCURRENT_TRANSACTIONS);
  assert.equal(h.end(p, true), ErrorCode.INVALID_TXN_STATE);
  h.writeMarkers();
  assert.equal(h.state(), 'CompleteAbort');
  assert.equal(h.end(p, false), 0);
});

test('while a Prepare state waits for its markers, InitProducerId, AddPartitions and EndTxn get CONCURRENT_TRANSACTIONS', () => {
  const h = new TxnHarness();
  const p = h.init();
  h.add(p, [tp('a', 0)]);
  h.end(p, true);
  assert.equal(h.init().errorCode, ErrorCode.CONCURRENT_TRANSACTIONS);
  assert.equal(h.add(p, [tp('b', 0)]), ErrorCode.CONCURRENT_TRANSACTIONS);
  assert.equal(h.end(p, true), ErrorCode.CONCURRENT_TRANSACTIONS);
  h.writeMarkers();
  assert.deepEqual(h.init(), { errorCode: 0, producerId: 1000n, producerEpoch: 1 });
});

test('a write in flight makes the transactional id pending: other operations get CONCURRENT_TRANSACTIONS until it is replayed', () => {
  const h = new TxnHarness();
  const p = h.init();
  const inFlight = h.shard.addPartitionsToTxn(h.now, { transactionalId: 't', ...p, partitions: [tp('a', 0)] }, () => {});
  assert.equal(h.end(p, true), ErrorCode.CONCURRENT_TRANSACTIONS);
  assert.equal(h.init().errorCode, ErrorCode.CONCURRENT_TRANSACTIONS);
  h.apply(inFlight);
  assert.equal(h.end(p, true), 0);
});

test('a failed append changes nothing and the client gets the translated error', () => {
  const h = new TxnHarness();
  const p = h.init();
  h.failNextAppend = ErrorCode.NOT_LEADER_OR_FOLLOWER;
  assert.equal(h.add(p, [tp('a', 0)]), ErrorCode.NOT_COORDINATOR);
  assert.equal(h.state(), 'Empty');
  h.failNextAppend = ErrorCode.REQUEST_TIMED_OUT;
  assert.equal(h.init().errorCode, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.equal(h.shard.txns.get('t')!.producerEpoch, 0);
  assert.equal(h.add(p, [tp('a', 0)]), 0);
  assert.equal(txnAppendError(ErrorCode.MESSAGE_TOO_LARGE), ErrorCode.UNKNOWN_SERVER_ERROR);
});

test('a second InitProducerId bumps the epoch and fences the old producer', () => {
  const h = new TxnHarness();
  const old = h.init();
  const fresh = h.init();
  assert.deepEqual(fresh, { errorCode: 0, producerId: 1000n, producerEpoch: 1 });
  assert.equal(h.add(old, [tp('a', 0)]), ErrorCode.PRODUCER_FENCED);
  assert.equal(h.end(old, true), ErrorCode.PRODUCER_FENCED);
  assert.equal(h.add({ producerId: 999n, producerEpoch: 1 }, [tp('a', 0)]), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(h.add(fresh, [tp('a', 0)]), 0);
  assert.equal(h.add(fresh, [tp('a', 0)], 'unknown'), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(h.end(fresh, true, 'unknown'), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
});

test('InitProducerId during an ongoing transaction aborts it under a bumped epoch and asks the client to retry', () => {
  const h = new TxnHarness();
  const p = h.init();
  h.add(p, [tp('a', 0), tp('b', 2)]);
  const r = h.init();
  assert.equal(r.errorCode, ErrorCode.CONCURRENT_TRANSACTIONS);
  const m = h.shard.txns.get('t')!;
  assert.equal(m.state, 'PrepareAbort');
  assert.equal(m.producerEpoch, 1);
  assert.deepEqual(h.markers.map((x) => [x.result, x.producerEpoch, x.partitions.length]), [['abort', 1, 2]]);
  // The old producer is fenced from now on.
  assert.equal(h.end(p, true), ErrorCode.PRODUCER_FENCED);
  assert.equal(h.init().errorCode, ErrorCode.CONCURRENT_TRANSACTIONS);
  h.writeMarkers();
  assert.equal(h.state(), 'CompleteAbort');
  // The retry bumps the epoch a second time.
  assert.deepEqual(h.init(), { errorCode: 0, producerId: 1000n, producerEpoch: 2 });
});

test('InitProducerId with the producer id and epoch (KIP-360): a bump, a retried bump, a fenced epoch, a wrong producer id', () => {
  const h = new TxnHarness();
  const first = h.init();
  const bumped = h.init('t', first.producerId, first.producerEpoch);
  assert.deepEqual(bumped, { errorCode: 0, producerId: 1000n, producerEpoch: 1 });
  // The answer was lost and the client retries with the epoch it had: the same epoch comes back.
  assert.deepEqual(h.init('t', first.producerId, first.producerEpoch), { errorCode: 0, producerId: 1000n, producerEpoch: 1 });
  // Another producer initializes without naming one: the last epoch is forgotten, the old one is fenced.
  assert.equal(h.init().producerEpoch, 2);
  assert.equal(h.init('t', first.producerId, first.producerEpoch).errorCode, ErrorCode.PRODUCER_FENCED);
  assert.equal(h.init('t', 42n, 0).errorCode, ErrorCode.PRODUCER_FENCED);
  assert.equal(h.init('t', 1000n, -1).errorCode, ErrorCode.INVALID_REQUEST);
  // A client naming a producer for an id the coordinator does not know gets a fresh producer id.
  assert.deepEqual(h.init('other', 77n, 3), { errorCode: 0, producerId: 1001n, producerEpoch: 0 });
  assert.equal(fencedErrorForVersion(ErrorCode.PRODUCER_FENCED, 22, 3), ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal(fencedErrorForVersion(ErrorCode.PRODUCER_FENCED, 22, 4), ErrorCode.PRODUCER_FENCED);
  assert.equal(fencedErrorForVersion(ErrorCode.PRODUCER_FENCED, 26, 1), ErrorCode.INVALID_PRODUCER_EPOCH);
});

test('an exhausted epoch rotates to a new producer id at epoch 0; a retry naming the old id gets it again', () => {
  // A log in which the id reached epoch 32766, as a long-lived producer would have.
  const h = new TxnHarness({}, 5, [encodeTxnRecord({ transactionalId: 't', value: {
    producerId: 1000n, lastProducerId: 1000n, nextProducerId: -1n, producerEpoch: 32766, lastProducerEpoch: -1, txnTimeoutMs: 60_000, state: 'CompleteCommit',
    topicPartitions: [], txnStartTimestampMs: 10, txnLastUpdateTimestampMs: 20, clientTransactionVersion: 0,
  } })]);
  h.nextProducerId = 1001n;
  const rotated = h.init('t', 1000n, 32766);
  assert.deepEqual(rotated, { errorCode: 0, producerId: 1001n, producerEpoch: 0 });
  assert.equal(h.shard.txns.get('t')!.lastProducerId, 1000n);
  assert.equal(h.shard.txns.get('t')!.lastProducerEpoch, 32766);
  // The retry of the rotation: the old producer id with its exhausted epoch is accepted (and matches the last epoch).
  assert.deepEqual(h.init('t', 1000n, 32766), { errorCode: 0, producerId: 1001n, producerEpoch: 0 });
});

test('transaction timeouts: over transaction.max.timeout.ms is refused; an expired ongoing transaction is aborted with an epoch bump', () => {
  const h = new TxnHarness({ transactionMaxTimeoutMs: 60_000, abortTimedOutTransactionsIntervalMs: 1000 });
  assert.equal(h.init('t', -1n, -1, 60_001).errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
  assert.equal(h.init('t', -1n, -1, 0).errorCode, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
  assert.equal(h.init('', -1n, -1, 1000).errorCode, ErrorCode.INVALID_REQUEST);
  const p = h.init('t', -1n, -1, 5000);
  h.add(p, [tp('a', 0)]);
  h.advance(4000);
  assert.equal(h.state(), 'Ongoing');
  h.advance(2000);
  const m = h.shard.txns.get('t')!;
  assert.equal(m.state, 'PrepareAbort');
  assert.equal(m.producerEpoch, 1);
  assert.deepEqual(h.markers.map((x) => [x.result, x.producerEpoch]), [['abort', 1]]);
  h.writeMarkers();
  assert.equal(h.state(), 'CompleteAbort');
  // The producer that let its transaction time out is fenced.
  assert.equal(h.add(p, [tp('a', 0)]), ErrorCode.PRODUCER_FENCED);
  assert.equal(h.end(p, true), ErrorCode.PRODUCER_FENCED);
  assert.equal(h.shard.nextDeadlineMs() !== null, true);
});

test('timed-out aborts and expirations are capped per tick; the rest follow in the next one', () => {
  const h = new TxnHarness({ abortTimedOutTransactionsIntervalMs: 1000, abortsPerTickMax: 1, expirationsPerTickMax: 1, transactionalIdExpirationMs: 5000, removeExpiredTransactionalIdsIntervalMs: 10_000 });
  for (const id of ['a', 'b']) h.add(h.init(id, -1n, -1, 2000), [tp('x', 0)], id);
  h.advance(3000);
  assert.deepEqual([h.state('a'), h.state('b')], ['PrepareAbort', 'Ongoing']);
  h.advance(1);
  assert.deepEqual([h.state('a'), h.state('b')], ['PrepareAbort', 'PrepareAbort']);
  h.writeMarkers();
  h.advance(5000);
  assert.deepEqual([h.state('a'), h.state('b')], ['CompleteAbort', 'CompleteAbort']);
  // The expiration scan at 11000 finds both idle since 4001, and expires one.
  h.advance(2000);
  assert.deepEqual([h.state('a'), h.state('b')], ['none', 'CompleteAbort']);
  h.advance(1);
  assert.deepEqual([h.state('a'), h.state('b')], ['none', 'none']);
});

test('reloading mid-commit finishes the transaction: PrepareCommit found at load yields its markers', () => {
  const h = new TxnHarness();
  const p = h.init();
  h.add(p, [tp('a', 0), tp('a', 1)]);
  h.end(p, true);
  assert.equal(h.markers.length, 1);
  // The coordinator moves before the markers are written.
  const h2 = h.reload();
  assert.equal(h2.state(), 'PrepareCommit');
  assert.deepEqual(h2.markers, [{ transactionalId: 't', producerId: 1000n, producerEpoch: 0, result: 'commit', coordinatorEpoch: 6, partitions: [tp('a', 0), tp('a', 1)] }]);
  // The old coordinator's report is refused by the new one.
  let stale = -1;
  h2.apply(h2.shard.completeTransaction(h2.now, h.markers[0]!, (c) => { stale = c; }));
  assert.equal(stale, ErrorCode.NOT_COORDINATOR);
  assert.deepEqual(h2.writeMarkers(), [0]);
  assert.equal(h2.state(), 'CompleteCommit');
  assert.equal(h2.end(p, true), 0);
});

test('while loading, requests get COORDINATOR_LOAD_IN_PROGRESS; once unloaded, NOT_COORDINATOR', async () => {
  const { TransactionCoordinatorShard, defaultTxnConfig } = await import('../../src/coordinator/index.js');
  const shard = new TransactionCoordinatorShard(defaultTxnConfig, 0, () => 1n);
  let code = -1;
  for (const r of shard.initProducerId(0, { transactionalId: 't', transactionTimeoutMs: 1000, producerId: -1n, producerEpoch: -1 }, (x) => { code = x.errorCode; }).replies) r.send();
  assert.equal(code, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(shard.describeTransaction('t').errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  assert.equal(shard.listTransactions(0, { stateFilters: [], producerIdFilters: [], durationFilterMs: -1, transactionalIdPattern: null }).errorCode, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  shard.onLoaded(0);
  shard.unload();
  for (const r of shard.endTxn(0, { transactionalId: 't', producerId: 1n, producerEpoch: 0, commit: true }, (x) => { code = x; }).replies) r.send();
  assert.equal(code, ErrorCode.NOT_COORDINATOR);
  assert.equal(shard.nextDeadlineMs(), null);
});

test('EndTxn on an Empty transaction is INVALID_TXN_STATE', () => {
  const h = new TxnHarness();
  const p = h.init();
  assert.equal(h.end(p, true), ErrorCode.INVALID_TXN_STATE);
  assert.equal(h.end(p, false), ErrorCode.INVALID_TXN_STATE);
});

test('verify-only AddPartitions answers per partition and writes nothing', () => {
  const h = new TxnHarness();
  const p = h.init();
  h.add(p, [tp('a', 0)]);
  const before = h.written.length;
  const verify = (q: { producerId: bigint; producerEpoch: number }, id = 't') =>
    h.shard.verifyPartitionsInTxn({ transactionalId: id, ...q, partitions: [tp('a', 0), tp('a', 1)] }).map((x) => x.errorCode);
  assert.deepEqual(verify(p), [0, ErrorCode.TRANSACTION_ABORTABLE]);
  assert.deepEqual(verify({ producerId: p.producerId, producerEpoch: 9 }), [ErrorCode.PRODUCER_FENCED, ErrorCode.PRODUCER_FENCED]);
  assert.deepEqual(verify({ producerId: 5n, producerEpoch: 0 }), [ErrorCode.INVALID_PRODUCER_ID_MAPPING, ErrorCode.INVALID_PRODUCER_ID_MAPPING]);
  assert.deepEqual(verify(p, 'nope'), [ErrorCode.INVALID_PRODUCER_ID_MAPPING, ErrorCode.INVALID_PRODUCER_ID_MAPPING]);
  h.end(p, true);
  assert.deepEqual(verify(p), [ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.CONCURRENT_TRANSACTIONS]);
  assert.equal(h.written.length, before + 1);
});

test('transactional id expiration: an idle id gets a tombstone after transactional.id.expiration.ms; an open transaction does not', () => {
  const h = new TxnHarness({ transactionalIdExpirationMs: 10_000, removeExpiredTransactionalIdsIntervalMs: 1000, transactionMaxTimeoutMs: 900_000 });
  const idle = h.init('idle');
  const busy = h.init('busy', -1n, -1, 900_000);
  h.add(busy, [tp('a', 0)], 'busy');
  h.advance(9000);
  assert.equal(h.state('idle'), 'Empty');
  h.advance(2000);
  assert.equal(h.state('idle'), 'none');
  assert.equal(h.state('busy'), 'Ongoing');
  const last = h.records().at(-1)!;
  assert.deepEqual(last, { transactionalId: 'idle', value: null });
  assert.equal(h.shard.describeTransaction('idle').errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
  assert.equal(h.add(idle, [tp('a', 0)], 'idle'), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  // Coming back, the id starts over with a new producer id; a reload agrees.
  assert.deepEqual(h.init('idle'), { errorCode: 0, producerId: 1002n, producerEpoch: 0 });
  const h2 = h.reload();
  assert.deepEqual(h2.shard.txns.get('idle')!.producerId, 1002n);
  assert.equal(h2.state('busy'), 'Ongoing');
});

test('describe and list transactions, with state, producer id, duration and pattern filters', () => {
  const h = new TxnHarness();
  const a = h.init('a');
  h.init('b');
  h.add(a, [tp('x', 1), tp('x', 0), tp('y', 0)], 'a');
  const d = h.shard.describeTransaction('a');
  assert.equal(d.errorCode, 0);
  assert.equal(d.transactionState, 'Ongoing');
  assert.equal(d.transactionStartTimeMs, BigInt(h.now));
  assert.deepEqual(d.topics, [{ topic: 'x', partitions: [0, 1] }, { topic: 'y', partitions: [0] }]);
  assert.equal(h.shard.describeTransaction('zzz').errorCode, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
  assert.equal(h.shard.describeTransaction('').errorCode, ErrorCode.INVALID_REQUEST);
  const list = (f: Partial<Parameters<typeof h.shard.listTransactions>[1]>) =>
    h.shard.listTransactions(h.now + 100, { stateFilters: [], producerIdFilters: [], durationFilterMs: -1, transactionalIdPattern: null, ...f });
  assert.deepEqual(list({}).transactionStates.map((t) => t.transactionalId), ['a', 'b']);
  const byState = list({ stateFilters: ['Ongoing', 'Bogus'] });
  assert.deepEqual(byState.transactionStates, [{ transactionalId: 'a', producerId: 1000n, transactionState: 'Ongoing' }]);
  assert.deepEqual(byState.unknownStateFilters, ['Bogus']);
  assert.deepEqual(list({ stateFilters: ['Bogus'] }).transactionStates, []);
  assert.deepEqual(list({ producerIdFilters: [1001n] }).transactionStates.map((t) => t.transactionalId), ['b']);
  assert.deepEqual(list({ durationFilterMs: 50 }).transactionStates.map((t) => t.transactionalId), ['a']);
  assert.deepEqual(list({ durationFilterMs: 500 }).transactionStates, []);
  assert.deepEqual(list({ transactionalIdPattern: /^b/ }).transactionStates.map((t) => t.transactionalId), ['b']);
});

test('transactional ids are routed like Kafka (abs(String.hashCode) % partitions)', () => {
  // "a".hashCode() is 97 in Java.
  assert.equal(partitionForTransactionalId('a', 50), 97 % 50);
  for (const id of ['x', 'transactional-id-1', 'ünïcode']) {
    const p = partitionForTransactionalId(id, 50);
    assert.ok(p >= 0 && p < 50);
  }
});
