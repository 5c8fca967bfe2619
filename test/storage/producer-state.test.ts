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
