// The transaction coordinator runtime over an in-memory partition: a commit whose markers are
// written by the MarkerSender and then completed, a marker sender that fails once, and a new
// coordinator loading a partition left mid-commit, which finishes the transaction.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/util/index.js';
import { iterateBatches } from '../../src/records/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import {
  TransactionCoordinatorShard, TxnShardRuntime, defaultTxnConfig, type CoordinatorLog, type MarkerWrite, type InitProducerIdResult,
} from '../../src/coordinator/index.js';

class MemoryLog implements CoordinatorLog {
  bytes = Buffer.alloc(0);
  nextOffset = 0;
  isLeader(): boolean { return true; }
  async append(_partition: number, batch: Buffer): Promise<number> {
    const copy = Buffer.from(batch);
    for (const view of iterateBatches(copy)) { view.baseOffset = this.nextOffset; this.nextOffset = view.lastOffset + 1; }
    this.bytes = Buffer.concat([this.bytes, copy]);
    return ErrorCode.NONE;
  }
  async read(_partition: number, offset: number): Promise<{ bytes: Buffer; endOffset: number }> {
    const parts: Buffer[] = [];
    let pos = 0;
    for (const view of iterateBatches(this.bytes)) {
      const size = view.sizeInBytes;
      if (view.lastOffset >= offset) parts.push(this.bytes.subarray(pos, pos + size));
      pos += size;
    }
    return { bytes: Buffer.concat(parts), endOffset: this.nextOffset };
  }
  logStartOffset(): number { return 0; }
}

class ManualScheduler {
  tasks: { atMs: number; fn: () => void; cancelled: boolean }[] = [];
  constructor(private readonly clock: ManualClock) {}
  schedule(delayMs: number, fn: () => void): { cancel(): void } {
    const t = { atMs: this.clock.nowMs() + delayMs, fn, cancelled: false };
    this.tasks.push(t);
    return { cancel: () => { t.cancelled = true; } };
  }
  runDue(): void {
    const due = this.tasks.filter((t) => !t.cancelled && t.atMs <= this.clock.nowMs());
    this.tasks = this.tasks.filter((t) => !due.includes(t));
    for (const t of due) t.fn();
  }
}

const settle = () => new Promise<void>((r) => setImmediate(r));
async function flush(): Promise<void> { for (let i = 0; i < 20; i++) await settle(); }

function setup(log = new MemoryLog(), epoch = 1, sender?: (m: MarkerWrite) => Promise<void>) {
  const clock = new ManualClock(1000);
  const scheduler = new ManualScheduler(clock);
  const sent: MarkerWrite[] = [];
  let nextPid = 500n;
  const shard = new TransactionCoordinatorShard(defaultTxnConfig, epoch, () => nextPid++);
  const rt = new TxnShardRuntime(0, shard, log, { writeMarkers: sender ?? (async (m) => { sent.push(m); }) }, clock, scheduler, { warn: () => {} });
  return { log, clock, scheduler, sent, shard, rt };
}

async function beginCommit(s: ReturnType<typeof setup>): Promise<InitProducerIdResult> {
  let init: InitProducerIdResult | undefined;
  await s.rt.submit((now) => s.shard.initProducerId(now, { transactionalId: 't', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }, (r) => { init = r; }));
  const p = { transactionalId: 't', producerId: init!.producerId, producerEpoch: init!.producerEpoch };
  await s.rt.submit((now) => s.shard.addPartitionsToTxn(now, { ...p, partitions: [{ topic: 'a', partition: 0 }] }, () => {}));
  let ended = -1;
  await s.rt.submit((now) => s.shard.endTxn(now, { ...p, commit: true }, (c) => { ended = c; }));
  assert.equal(ended, 0);
  return init!;
}

test('a commit through the runtime: the Prepare record is appended, the markers written, then CompleteCommit', async () => {
  const s = setup();
  await s.rt.loaded;
  await beginCommit(s);
  await flush();
  assert.equal(s.sent.length, 1);
  assert.deepEqual(s.sent[0]!.partitions, [{ topic: 'a', partition: 0 }]);
  assert.equal(s.shard.txns.get('t')!.state, 'CompleteCommit');
  assert.equal(s.log.nextOffset, 4);
});

test('a marker sender that fails is retried after a backoff', async () => {
  let calls = 0;
  const s = setup(new MemoryLog(), 1, async () => { calls++; if (calls === 1) throw new Error('broker down'); });
  await s.rt.loaded;
  await beginCommit(s);
  await flush();
  assert.equal(s.shard.txns.get('t')!.state, 'PrepareCommit');
  s.clock.advance(100);
  s.scheduler.runDue();
  await flush();
  assert.equal(calls, 2);
  assert.equal(s.shard.txns.get('t')!.state, 'CompleteCommit');
});

test('a coordinator loading a partition left mid-commit writes the markers and completes the transaction', async () => {
  const never = new Promise<void>(() => {});
  const first = setup(new MemoryLog(), 1, () => never);
  await first.rt.loaded;
  await beginCommit(first);
  assert.equal(first.shard.txns.get('t')!.state, 'PrepareCommit');
  first.rt.close();
  const second = setup(first.log, 2);
  await second.rt.loaded;
  await flush();
  assert.equal(second.sent.length, 1);
  assert.equal(second.sent[0]!.coordinatorEpoch, 2);
  assert.equal(second.shard.txns.get('t')!.state, 'CompleteCommit');
});
