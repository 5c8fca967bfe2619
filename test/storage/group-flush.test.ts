// Grouped fsync for flush.messages (issue 33): an append that must be durable is acknowledged only
// once its bytes are fsynced, and many partitions' concurrent appends share a few fsync rounds of
// their log directory. The FileSystem double holds every async fsync at a gate the test opens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, Prng } from '../../src/util/index.js';
import { LogManager, MemoryFileSystem, StorageError, logConfig } from '../../src/storage/index.js';
import { batch, dump } from './helpers.js';

/** A MemoryFileSystem whose async fsyncs wait until the test releases them. */
class GatedFileSystem extends MemoryFileSystem {
  held: (() => void)[] = [];
  gated = true;
  asyncSyncs = 0;
  override async syncFileAsync(path: string): Promise<void> {
    this.asyncSyncs++;
    if (this.gated) await new Promise<void>((resolve) => this.held.push(resolve));
    return super.syncFileAsync(path);
  }
  release(): void {
    const all = this.held;
    this.held = [];
    for (const r of all) r();
  }
}

function manager(fs: MemoryFileSystem, clock: ManualClock, flushMessages = 1): LogManager {
  return new LogManager({ dir: '/data', fs, clock, configFor: () => logConfig({ flushMessages, segmentIndexBytes: 4096 }), cleanerEnable: false });
}

const turns = async (n: number) => { for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r)); };

test('flush.messages=1: an append is acknowledged only after its bytes are fsynced; until then it does not count as durable, and a power cut before the fsync may lose it', async () => {
  const fs = new GatedFileSystem();
  const clock = new ManualClock(10_000);
  const m = manager(fs, clock);
  const log = m.getOrCreateLog('orders', 0, null);
  let acked = false;
  const append = log.appendAsLeader(batch(3, { value: (i) => `first-${i}` }), 0).then((r) => { acked = true; return r; });
  await turns(20);
  assert.equal(acked, false, 'not acknowledged while its fsync is held');
  assert.equal(log.logEndOffset, 3, 'written to the file (the page cache)');
  assert.equal(log.durableEndOffset, 0, 'but not counted toward the high watermark');
  assert.ok(fs.held.length > 0, 'an fsync is waiting');
  fs.release();
  const r = await append;
  assert.equal(r.lastOffset, 2);
  assert.equal(log.durableEndOffset, 3);
  assert.equal(log.recoveryPoint, 3, 'the recovery point moved past the fsynced bytes');
  // Acknowledged: a power cut that keeps only fsynced bytes keeps it.
  fs.gated = false;
  fs.crash();
  const again = manager(fs, clock);
  assert.deepEqual(dump(again.getOrCreateLog('orders', 0, null)).map(([, , v]) => v), ['first-0', 'first-1', 'first-2']);

  // The same with the fsync never reaching the disk: nothing was acknowledged, and the power cut takes it.
  const fs2 = new GatedFileSystem();
  const m2 = manager(fs2, clock);
  const log2 = m2.getOrCreateLog('orders', 0, null);
  let acked2 = false;
  void log2.appendAsLeader(batch(2), 0).then(() => { acked2 = true; }, () => {});
  await turns(20);
  assert.equal(acked2, false);
  fs2.crash();
  assert.equal(manager(fs2, clock).getOrCreateLog('orders', 0, null).logEndOffset, 0, 'the unsynced append is gone');
});

test('flush.messages=1: 200 concurrent appends over 20 partitions of one log directory share a few fsync rounds (one fsync per dirty file per round), and all survive a power cut', async () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(10_000);
  const m = manager(fs, clock);
  const partitions = 20;
  const appends = 200;
  const logs = Array.from({ length: partitions }, (_, p) => m.getOrCreateLog('wide', p, null));
  await turns(50); // the new partitions' background partition.metadata writes
  const syncsBefore = fs.stats.syncs;
  const results = await Promise.all(Array.from({ length: appends }, (_, i) => logs[i % partitions]!.appendAsLeader(batch(1, { value: () => `v${i}` }), 0)));
  assert.equal(results.length, appends);
  const rounds = m.flusher.rounds;
  assert.ok(rounds >= 1 && rounds <= 3, `${rounds} fsync rounds for ${appends} appends`);
  const syncs = fs.stats.syncs - syncsBefore;
  // Each round fsyncs each registered partition's active segment (and, the first time, its
  // directory, and the leader-epoch checkpoint of the new epoch: a file and its directory).
  assert.ok(syncs <= rounds * partitions * 4, `${syncs} fsyncs for ${appends} appends in ${rounds} rounds`);
  assert.ok(syncs < appends / 2, `${syncs} fsyncs, far fewer than ${appends} appends`);
  for (const log of logs) assert.equal(log.durableEndOffset, appends / partitions);
  fs.crash(new Prng(3));
  const again = manager(fs, clock);
  for (let p = 0; p < partitions; p++) assert.equal(again.getOrCreateLog('wide', p, null).logEndOffset, appends / partitions, `partition ${p}`);
});

test('appends that arrive while a round runs wait for the next round, which covers them all', async () => {
  const fs = new GatedFileSystem();
  const clock = new ManualClock(10_000);
  const m = manager(fs, clock);
  const log = m.getOrCreateLog('orders', 0, null);
  const first = log.appendAsLeader(batch(1), 0);
  await turns(10);
  assert.equal(m.flusher.rounds, 1);
  // The first round's fsync is held; 50 more appends queue for the second.
  const later = Array.from({ length: 50 }, () => log.appendAsLeader(batch(1), 0));
  await turns(10);
  assert.equal(m.flusher.rounds, 1, 'one round at a time per log directory');
  fs.release();
  await first;
  for (let i = 0; i < 20 && fs.held.length === 0; i++) await turns(1);
  assert.equal(m.flusher.rounds, 2);
  fs.release();
  await Promise.all(later);
  assert.equal(m.flusher.rounds, 2, 'the 50 later appends shared one round');
  assert.equal(log.durableEndOffset, 51);
});

test('a follower\'s appends become durable through the same rounds (whenDurable), and a log without flush.messages never waits', async () => {
  const fs = new GatedFileSystem();
  const clock = new ManualClock(10_000);
  const leaderFs = new MemoryFileSystem();
  const leader = manager(leaderFs, clock, Number.MAX_SAFE_INTEGER).getOrCreateLog('orders', 0, null);
  for (let i = 0; i < 3; i++) await leader.appendAsLeader(batch(2), 0);
  assert.equal(leader.durableEndOffset, 6, 'no flush.messages: everything counts at once');
  assert.equal(leader.recoveryPoint, 0, 'and nothing was fsynced');
  const follower = manager(fs, clock).getOrCreateLog('orders', 0, null);
  follower.appendAsFollower(leader.read(0, 1 << 20, 6));
  assert.equal(follower.logEndOffset, 6);
  assert.equal(follower.durableEndOffset, 0);
  let durable = false;
  const done = follower.whenDurable().then(() => { durable = true; });
  await turns(10);
  assert.equal(durable, false);
  fs.release();
  await done;
  assert.equal(follower.durableEndOffset, 6);
});

test('a failed grouped fsync fails the waiting appends with KAFKA_STORAGE_ERROR and takes the directory offline', async () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(10_000);
  const m = manager(fs, clock);
  const a = m.getOrCreateLog('orders', 0, null);
  const b = m.getOrCreateLog('orders', 1, null);
  await a.appendAsLeader(batch(1), 0);
  fs.inject({ op: 'sync', code: 'EIO', path: /orders-0\/.*\.log$/ });
  const [ra, rb] = await Promise.allSettled([a.appendAsLeader(batch(1), 0), b.appendAsLeader(batch(1), 0)]);
  assert.equal(ra.status, 'rejected');
  assert.ok((ra as PromiseRejectedResult).reason instanceof StorageError && (ra as PromiseRejectedResult).reason.kind === 'KAFKA_STORAGE_ERROR');
  assert.ok(m.offline, 'the directory is offline');
  // The other partition's fsync of the same round succeeded, or it is offline too: never a silent acknowledgement of unsynced bytes.
  if (rb.status === 'fulfilled') assert.equal(b.recoveryPoint, 1);
  await assert.rejects(b.appendAsLeader(batch(1), 0), (e: unknown) => e instanceof StorageError && e.kind === 'KAFKA_STORAGE_ERROR');
});

test('a partition deleted while its append waits for the fsync: the append fails with KAFKA_STORAGE_ERROR and the log directory stays online', async () => {
  const fs = new GatedFileSystem();
  const clock = new ManualClock(10_000);
  const m = manager(fs, clock);
  const other = m.getOrCreateLog('kept', 0, null);
  const log = m.getOrCreateLog('doomed', 0, null);
  const first = log.appendAsLeader(batch(1), 0);
  await turns(10);
  // The first round runs (held); this append waits for the second, which starts after the deletion.
  const waiting = log.appendAsLeader(batch(1), 0);
  m.deleteLog('doomed', 0);
  fs.gated = false;
  fs.release();
  await Promise.allSettled([first]);
  await assert.rejects(waiting, (e: unknown) => e instanceof StorageError && e.kind === 'KAFKA_STORAGE_ERROR');
  assert.equal(m.offline, null, 'the directory is not offline');
  await other.appendAsLeader(batch(1), 0);
  assert.equal(other.durableEndOffset, 1);
});
