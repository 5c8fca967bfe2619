import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/util/index.js';
import { LogManager, MemoryFileSystem, StorageError, logConfig } from '../../src/storage/index.js';
import { batch, dump } from './helpers.js';

function manager(fs: MemoryFileSystem, clock: ManualClock, extra: Partial<ConstructorParameters<typeof LogManager>[0]> = {}) {
  return new LogManager({ dir: '/data', fs, clock, configFor: (t) => logConfig(t === 'short' ? { retentionMs: 1000, segmentBytes: 200 } : { segmentIndexBytes: 4096 }), ...extra });
}

test('the clean-shutdown marker records the broker epoch (Kafka\'s {"version":0,"brokerEpoch":N}); a crash or an empty marker gives -1', () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(10_000);
  let m = manager(fs, clock);
  assert.equal(m.cleanShutdownBrokerEpoch, -1n, 'first start');
  m.close(42n);
  assert.deepEqual(JSON.parse(fs.readFile('/data/.kafka_cleanshutdown').toString()), { version: 0, brokerEpoch: 42 });
  m = manager(fs, clock);
  assert.equal(m.cleanShutdownBrokerEpoch, 42n);
  // No close: the next start is after a crash.
  m = manager(fs, clock);
  assert.equal(m.cleanShutdownBrokerEpoch, -1n);
  fs.writeFileAtomic('/data/.kafka_cleanshutdown', Buffer.alloc(0));
  assert.equal(manager(fs, clock).cleanShutdownBrokerEpoch, -1n, 'a marker without an epoch');
});

test('a log directory keeps its partitions, checkpoints and clean-shutdown marker across restarts', async () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(10_000);
  let m = manager(fs, clock);
  m.ensureMetaProperties(1, 'cluster-a');
  const log = m.getOrCreateLog('orders', 0, 'AAECAwQFBgcICQoLDA0ODw');
  for (let i = 0; i < 5; i++) await log.appendAsLeader(batch(2), 0);
  log.updateHighWatermark(10);
  m.close();
  for (const f of ['meta.properties', 'recovery-point-offset-checkpoint', 'log-start-offset-checkpoint', 'replication-offset-checkpoint', '.kafka_cleanshutdown']) {
    assert.ok(fs.list('/data').includes(f), f);
  }
  assert.match(fs.readFile('/data/orders-0/partition.metadata').toString(), /topic_id: AAECAwQFBgcICQoLDA0ODw/);
  assert.equal(fs.readFile('/data/recovery-point-offset-checkpoint').toString(), '0\n1\norders 0 10\n');
  m = manager(fs, clock);
  assert.equal(m.hadCleanShutdown, true);
  assert.ok(!fs.list('/data').includes('.kafka_cleanshutdown'), 'a crash from now on is unclean');
  assert.deepEqual(m.partitionDirs(), [{ topic: 'orders', partition: 0 }]);
  const again = m.getOrCreateLog('orders', 0, 'AAECAwQFBgcICQoLDA0ODw');
  assert.equal(again.recovery.segmentsScanned, 0);
  assert.equal(again.highWatermark, 10);
  assert.equal(dump(again).length, 10);
  assert.throws(() => m.ensureMetaProperties(1, 'cluster-b'), (e: unknown) => e instanceof StorageError && /belongs to cluster cluster-a/.test(e.message));
  assert.throws(() => m.ensureMetaProperties(2, 'cluster-a'), /belongs to node 1/);
  m.deleteLog('orders', 0);
  assert.deepEqual(m.partitionDirs(), []);
  await m.removalsDone();
  assert.ok(!fs.list('/data').some((n) => n.startsWith('orders-0')), 'the renamed directory is removed off the event loop');
});

test('retention runs from tick on its interval; an I/O error takes the whole directory offline', async () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(10_000);
  fs.now = () => clock.nowMs();
  const m = manager(fs, clock, { retentionCheckIntervalMs: 1000 });
  const short = m.getOrCreateLog('short', 0, null);
  const other = m.getOrCreateLog('other', 0, null);
  for (let i = 0; i < 10; i++) await short.appendAsLeader(batch(2, { timestamp: 10_000 }), 0);
  clock.advance(5000);
  await m.tick(clock.nowMs());
  assert.equal(short.logStartOffset, 20, 'expired segments deleted');
  fs.inject({ op: 'write', code: 'EIO', path: /short-0/ });
  await assert.rejects(short.appendAsLeader(batch(1), 0), /KAFKA_STORAGE_ERROR|I\/O error/);
  assert.ok(m.offline);
  await assert.rejects(other.appendAsLeader(batch(1), 0), (e: unknown) => e instanceof StorageError && e.kind === 'KAFKA_STORAGE_ERROR');
  assert.throws(() => m.getOrCreateLog('third', 0, null), (e: unknown) => e instanceof StorageError && e.kind === 'KAFKA_STORAGE_ERROR');
});

test('10,000 partitions open without holding 10,000 file descriptors', async () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(0);
  const m = manager(fs, clock, { openFilesMax: 256 });
  for (let p = 0; p < 10_000; p++) await m.getOrCreateLog('wide', p, null).appendAsLeader(batch(1), 0);
  assert.ok(m.files.openCount <= 256, `${m.files.openCount} open`);
  m.close();
  const again = manager(fs, clock, { openFilesMax: 256 });
  for (let p = 0; p < 10_000; p += 1) again.getOrCreateLog('wide', p, null);
  assert.ok(again.files.openCount <= 256);
  assert.equal(dump(again.get('wide', 9_999)!).length, 1);
});

test('producer.id.expiration.ms: an idle producer is forgotten on the check interval; until then its retry is a duplicate', async () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(1_000_000);
  const m = manager(fs, clock, { producerIdExpirationMs: 60_000, producerIdExpirationCheckIntervalMs: 10_000 });
  const log = m.getOrCreateLog('idem', 0, null);
  const sent = () => batch(2, { producerId: 7, producerEpoch: 0, baseSequence: 0, timestamp: clock.nowMs() });
  const first = await log.appendAsLeader(sent(), 0);
  clock.advance(30_000);
  await m.tick(clock.nowMs());
  const retry = await log.appendAsLeader(sent(), 0);
  assert.equal(retry.duplicate, true);
  assert.equal(retry.firstOffset, first.firstOffset, 'the original offset');
  clock.advance(40_000); // 70 s idle: past the expiration
  await m.tick(clock.nowMs());
  assert.equal(log.producerState.producers.has(7), false);
  const after = await log.appendAsLeader(sent(), 0);
  assert.equal(after.duplicate, false, 'an expired producer starts again, as in Kafka');
  assert.equal(log.logEndOffset, 4);
});

test('the periodic checkpoint is written off the event loop, and one still in flight at close never replaces what close wrote', async () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(10_000);
  const m = manager(fs, clock, { checkpointIntervalMs: 1000 });
  const log = m.getOrCreateLog('orders', 0, null);
  await log.appendAsLeader(batch(2), 0);
  log.updateHighWatermark(2);
  clock.advance(1000);
  await m.tick(clock.nowMs());
  assert.equal(fs.readFile('/data/replication-offset-checkpoint').toString(), '0\n1\norders 0 2\n', 'the periodic checkpoint landed');
  await log.appendAsLeader(batch(3), 0);
  log.updateHighWatermark(5);
  const inFlight = m.checkpointAsync(); // takes the high watermark 5 now, writes it later
  await log.appendAsLeader(batch(1), 0);
  log.updateHighWatermark(6);
  m.close();
  await inFlight;
  assert.equal(fs.readFile('/data/replication-offset-checkpoint').toString(), '0\n1\norders 0 6\n', 'close wrote last, and the older checkpoint did not land after it');
  assert.equal(fs.readFile('/data/recovery-point-offset-checkpoint').toString(), '0\n1\norders 0 6\n');
});

test('after a crash the high watermark is the checkpointed one, not the end of a flushed suffix the leader wrote but never had committed; without a checkpoint it starts at the log start offset', async () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(10_000);
  let m = manager(fs, clock);
  let log = m.getOrCreateLog('orders', 0, null);
  for (let i = 0; i < 3; i++) await log.appendAsLeader(batch(2), 0);
  log.updateHighWatermark(4);
  m.checkpoint();
  // Offsets 4 and 5 reached no follower; the leader's own flush made them durable here anyway.
  log.flush();
  m = manager(fs, clock); // a SIGKILL: no close
  log = m.getOrCreateLog('orders', 0, null);
  assert.equal(m.hadCleanShutdown, false);
  assert.equal(log.logEndOffset, 6, 'the flushed suffix survives the crash');
  assert.equal(log.highWatermark, 4, 'but is not committed: a new leader may have other records there');

  const fresh = new MemoryFileSystem();
  m = manager(fresh, clock);
  log = m.getOrCreateLog('orders', 0, null);
  for (let i = 0; i < 3; i++) await log.appendAsLeader(batch(2), 0);
  log.flush();
  m = manager(fresh, clock); // killed before its first checkpoint
  log = m.getOrCreateLog('orders', 0, null);
  assert.equal(log.logEndOffset, 6);
  assert.equal(log.highWatermark, 0);
});

test('a new partition is created without an fsync or a file write on the event loop; its partition.metadata is written and made durable in the background, and a power cut before that leaves a log that opens and takes its topic id again', async () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(10_000);
  const m = manager(fs, clock);
  m.ensureMetaProperties(1, 'cluster-a');
  const before = fs.stats.syncs;
  const created = m.getOrCreateLog('fresh', 0, 'AAECAwQFBgcICQoLDA0ODw');
  assert.equal(fs.stats.syncs, before, 'no fsync while creating an empty partition');
  assert.equal(created.recovery.segmentsScanned, 0, 'nothing to recover in a new directory');
  assert.ok(!fs.exists('/data/fresh-0/partition.metadata'), 'written on a later turn, off the event loop');
  // A power cut now: the background write never happened.
  fs.crash();
  assert.ok(!fs.exists('/data/fresh-0/partition.metadata'), 'no partition.metadata after the crash');
  const afterCrash = manager(fs, clock);
  const reopened = afterCrash.getOrCreateLog('fresh', 0, 'AAECAwQFBgcICQoLDA0ODw');
  assert.equal(reopened.logEndOffset, 0);
  assert.match(fs.readFile('/data/fresh-0/partition.metadata').toString(), /topic_id: AAECAwQFBgcICQoLDA0ODw\n/, 'written again, durably');
  // Without a crash, the background fsync makes the first write durable.
  const fs2 = new MemoryFileSystem();
  const other = manager(fs2, clock);
  other.ensureMetaProperties(1, 'cluster-a');
  // The wait is for the partition's own write and fsync (a 10 ms timer alone raced it on a loaded machine).
  other.getOrCreateLog('fresh', 1, 'AAECAwQFBgcICQoLDA0ODw');
  for (let i = 0; i < 20 && !fs2.exists('/data/fresh-1/partition.metadata'); i++) await new Promise((r) => setImmediate(r));
  assert.ok(fs2.exists('/data/fresh-1/partition.metadata'), 'the background write ran');
  fs2.crash();
  assert.match(fs2.readFile('/data/fresh-1/partition.metadata').toString(), /topic_id: AAECAwQFBgcICQoLDA0ODw\n/, 'durable once the background fsync ran');
  // Garbage that is not a cut-short write is still refused.
  fs.writeFileAtomic('/data/fresh-0/partition.metadata', Buffer.from('something else\n'));
  assert.throws(() => manager(fs, clock).getOrCreateLog('fresh', 0, 'AAECAwQFBgcICQoLDA0ODw'), /no topic_id/);
});

test('a new partition costs its directory and partition.metadata only; its first write creates the segment, and a power cut or a restart before that gives back an empty log at offset 0', async () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(10_000);
  let m = manager(fs, clock);
  m.ensureMetaProperties(1, 'cluster-a');
  const log = m.getOrCreateLog('lazy', 0, 'AAECAwQFBgcICQoLDA0ODw');
  assert.deepEqual(fs.list('/data/lazy-0'), [], 'the directory only, on the event loop');
  for (let i = 0; i < 20 && !fs.exists('/data/lazy-0/partition.metadata'); i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual(fs.list('/data/lazy-0'), ['partition.metadata'], 'no segment file before the first write');
  assert.equal(log.read(0, 1 << 20, 0).length, 0, 'an empty partition reads as empty');
  assert.equal(log.logEndOffset, 0);
  assert.deepEqual(fs.list('/data/lazy-0'), ['partition.metadata'], 'reading creates nothing');
  // A restart (clean, then after a power cut) before any write: the same empty log.
  m.close();
  m = manager(fs, clock);
  assert.equal(m.getOrCreateLog('lazy', 0, 'AAECAwQFBgcICQoLDA0ODw').logEndOffset, 0);
  fs.crash();
  m = manager(fs, clock);
  const again = m.getOrCreateLog('lazy', 0, 'AAECAwQFBgcICQoLDA0ODw');
  assert.equal(again.logEndOffset, 0);
  // The first write creates the segment; a flush then a power cut keeps it.
  const fresh = m.getOrCreateLog('lazy', 1, 'AAECAwQFBgcICQoLDA0ODw');
  await fresh.appendAsLeader(batch(3), 0);
  assert.ok(fs.list('/data/lazy-1').includes('00000000000000000000.log'));
  fresh.flush();
  fs.crash();
  m = manager(fs, clock);
  const kept = m.getOrCreateLog('lazy', 1, 'AAECAwQFBgcICQoLDA0ODw');
  assert.equal(kept.logEndOffset, 3);
  assert.deepEqual(dump(kept).map(([o]) => o), [0, 1, 2]);
  await kept.appendAsLeader(batch(2), 0);
  assert.equal(kept.logEndOffset, 5);
});

test('a new partition\'s background partition.metadata write never lands for a deleted log: a topic deleted and re-created meanwhile keeps its own id; close() writes what the background had not', async () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(10_000);
  const m = manager(fs, clock);
  m.ensureMetaProperties(1, 'cluster-a');
  const oldId = 'AAECAwQFBgcICQoLDA0ODw';
  const newId = 'DwAODQwLCgkIBwYFBAMCAQ';
  // More than the writes in flight at once, so some wait in the queue.
  for (let p = 0; p < 6; p++) m.getOrCreateLog('again', p, oldId);
  for (let p = 0; p < 6; p++) m.deleteLog('again', p);
  for (let p = 0; p < 6; p++) m.getOrCreateLog('again', p, newId);
  for (let i = 0; i < 100; i++) await new Promise((r) => setImmediate(r));
  for (let p = 0; p < 6; p++) {
    assert.match(fs.readFile(`/data/again-${p}/partition.metadata`).toString(), new RegExp(`topic_id: ${newId}\n`), `again-${p}`);
    assert.deepEqual(fs.list(`/data/again-${p}`), ['partition.metadata'], 'no temporary file left behind');
  }
  assert.equal(m.offline, null);
  // Created just before a clean shutdown: close() writes them.
  for (let p = 0; p < 6; p++) m.getOrCreateLog('late', p, newId);
  m.close();
  for (let p = 0; p < 6; p++) assert.match(fs.readFile(`/data/late-${p}/partition.metadata`).toString(), new RegExp(`topic_id: ${newId}\n`));
  await m.removalsDone();
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  for (let p = 0; p < 6; p++) assert.deepEqual(fs.list(`/data/late-${p}`), ['partition.metadata'], `late-${p}: the background's own write came to nothing`);
});

test('log.writeback.bytes: a log with that much appended since its last flush is fsynced in the background, one log at a time, and survives a power cut', async () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(10_000);
  const m = manager(fs, clock, { writebackBytes: 1000 });
  m.ensureMetaProperties(1, 'cluster-a');
  const a = m.getOrCreateLog('a', 0, 'AAECAwQFBgcICQoLDA0ODw');
  const b = m.getOrCreateLog('b', 0, 'AAECAwQFBgcICQoLDA0ODx');
  let inFlight = 0;
  let most = 0;
  for (const log of [a, b]) {
    const flushAsync = log.flushAsync.bind(log);
    log.flushAsync = async () => { inFlight++; most = Math.max(most, inFlight); try { await flushAsync(); } finally { inFlight--; } };
  }
  await a.appendAsLeader(batch(5), 0); // well under 1000 bytes: nothing yet
  await new Promise((r) => setImmediate(r));
  assert.equal(a.recoveryPoint, 0);
  while (a.logEndOffset < 100) await a.appendAsLeader(batch(10, { value: () => 'x'.repeat(50) }), 0);
  while (b.logEndOffset < 100) await b.appendAsLeader(batch(10, { value: () => 'x'.repeat(50) }), 0);
  const aEnd = a.logEndOffset;
  const bEnd = b.logEndOffset;
  for (let i = 0; i < 100 && (a.recoveryPoint < aEnd || b.recoveryPoint < bEnd); i++) await new Promise((r) => setImmediate(r));
  assert.deepEqual([a.recoveryPoint, b.recoveryPoint], [aEnd, bEnd], 'both flushed without a flush call');
  assert.equal(most, 1, 'one background flush at a time');
  fs.crash();
  const after = manager(fs, clock);
  assert.equal(dump(after.getOrCreateLog('a', 0, 'AAECAwQFBgcICQoLDA0ODw')).length, aEnd, 'what was written back survives a power cut');
  // Off (0, or not given): the OS decides, and a power cut loses what was not flushed.
  const fs2 = new MemoryFileSystem();
  const off = manager(fs2, clock);
  off.ensureMetaProperties(1, 'cluster-a');
  const c = off.getOrCreateLog('c', 0, 'AAECAwQFBgcICQoLDA0ODw');
  while (c.logEndOffset < 100) await c.appendAsLeader(batch(10, { value: () => 'x'.repeat(50) }), 0);
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  assert.equal(c.recoveryPoint, 0);
});
