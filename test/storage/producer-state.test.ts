import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../src/storage/index.js';
import { batch, openLog, setup } from './helpers.js';

const idem = (seq: number, n = 2, epoch = 0) => batch(n, { producerId: 42, producerEpoch: epoch, baseSequence: seq });

test('a retried idempotent batch is answered with its original offsets and not appended again', async () => {
  const { log } = setup();
  const a = await log.appendAsLeader(idem(0), 0);
  const b = await log.appendAsLeader(idem(2), 0);
  const retry = await log.appendAsLeader(idem(0), 0);
  assert.deepEqual([retry.firstOffset, retry.lastOffset, retry.duplicate], [a.firstOffset, a.lastOffset, true]);
  assert.equal(log.logEndOffset, b.lastOffset + 1);
  await assert.rejects(log.appendAsLeader(idem(7), 0), (e: unknown) => e instanceof StorageError && e.kind === 'OUT_OF_ORDER_SEQUENCE_NUMBER');
  await log.appendAsLeader(idem(0, 1, 1), 0); // a new epoch starts at 0
  await assert.rejects(log.appendAsLeader(idem(4, 1, 0), 0), (e: unknown) => e instanceof StorageError && e.kind === 'INVALID_PRODUCER_EPOCH');
});

test('producer state survives a clean restart (snapshot) and a crash (rebuilt from the log)', async () => {
  for (const clean of [true, false]) {
    const { fs, clock } = setup({ segmentBytes: 300 });
    let log = openLog(fs, clock, { segmentBytes: 300 });
    let first = 0;
    for (let s = 0; s < 20; s += 2) { const r = await log.appendAsLeader(idem(s), 0); if (s === 16) first = r.firstOffset; }
    assert.ok(fs.list('/data/orders-0').some((n) => n.endsWith('.snapshot')), 'snapshots are written on roll');
    const rp = log.recoveryPoint;
    if (clean) log.close(); else { log.flush(); fs.crash(); }
    log = openLog(fs, clock, { segmentBytes: 300 }, { recoveryPoint: clean ? log.recoveryPoint : rp, clean });
    const retry = await log.appendAsLeader(idem(16), 0);
    assert.equal(retry.duplicate, true, `clean=${clean}`);
    assert.equal(retry.firstOffset, first);
    const next = await log.appendAsLeader(idem(20), 0);
    assert.equal(next.duplicate, false);
  }
});

test('a transaction marker from an older producer epoch or an older coordinator epoch is refused; a valid one closes the transaction', async () => {
  const { log } = setup();
  const { buildControlBatch } = await import('../../src/records/index.js');
  const marker = (type: 'COMMIT' | 'ABORT', producerEpoch: number, coordinatorEpoch: number) =>
    buildControlBatch({ type, producerId: 42, producerEpoch, coordinatorEpoch, timestamp: 2_000 });
  const txn = (seq: number, epoch: number) => batch(2, { producerId: 42, producerEpoch: epoch, baseSequence: seq, isTransactional: true });
  await log.appendAsLeader(txn(0, 1), 0);
  await assert.rejects(log.appendAsLeader(marker('COMMIT', 1, 5), 0), (e: unknown) => e instanceof StorageError && e.kind === 'INVALID_RECORD', 'clients may not write markers');
  await log.appendAsLeader(marker('COMMIT', 1, 5), 0, 'coordinator');
  assert.equal(log.lastStableOffset, log.highWatermark);
  await log.appendAsLeader(txn(2, 1), 0);
  await assert.rejects(log.appendAsLeader(marker('ABORT', 0, 5), 0, 'coordinator'), (e: unknown) => e instanceof StorageError && e.kind === 'INVALID_PRODUCER_EPOCH');
  await assert.rejects(log.appendAsLeader(marker('ABORT', 1, 4), 0, 'coordinator'), (e: unknown) => e instanceof StorageError && e.kind === 'TRANSACTION_COORDINATOR_FENCED');
  assert.equal(log.producerState.firstUnstableOffset(), 3, 'the transaction is still open');
  await log.appendAsLeader(marker('ABORT', 2, 6), 0, 'coordinator'); // a fencing abort: bumped epoch, newer coordinator
  assert.equal(log.producerState.firstUnstableOffset(), null);
  assert.deepEqual(log.abortedTransactions(0, log.logEndOffset).map((t) => [t.producerId, t.firstOffset]), [[42, 3]]);
});
