// A log closed while an append was still validating its records (a compacted topic's keys are read
// asynchronously) must not write when that append resumes: by then the directory may be open again
// (a broker restarted in the same process, or the partition re-created), and a second writer at the
// closed log's idea of the end puts bytes over the live log's, which then serves a batch no CRC
// ever checked (seen in the share queue checker: a `__share_group_state` partition that failed to
// load with "49288729 records cannot fit in a 100-byte body", and followers that could never
// append what their leader sent them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { iterateBatches } from '../../src/records/index.js';
import { LogManager, MemoryFileSystem, StorageError, logConfig } from '../../src/storage/index.js';
import { ManualClock } from '../../src/util/index.js';
import { batch, dump, openLog, setup } from './helpers.js';

test('an append that resumes after its log was closed is refused, and the log opened again meanwhile is left whole', async () => {
  const { fs, clock, log } = setup({ cleanupPolicy: ['compact'] });
  await log.appendAsLeader(batch(2), 0);
  // Validation of a compacted batch awaits; the log closes before the write.
  const late = log.appendAsLeader(batch(3, { key: (i) => `late${i}`, value: () => 'y'.repeat(300) }), 0);
  log.close();
  const reopened = openLog(fs, clock, { cleanupPolicy: ['compact'] }, { clean: true });
  await reopened.appendAsLeader(batch(1, { key: () => 'live' }), 1);
  await assert.rejects(late, (e: unknown) => e instanceof StorageError, 'the closed log refuses the append');
  await reopened.appendAsLeader(batch(1, { key: () => 'after' }), 1);
  // Every batch of the live log is whole (CRC), at the offsets the live log gave.
  const bytes = reopened.read(0, 1 << 20, reopened.logEndOffset);
  const batches = [...iterateBatches(bytes)];
  assert.deepEqual(batches.map((v) => [v.baseOffset, v.lastOffset, v.verifyCrc()]), [[0, 1, true], [2, 2, true], [3, 3, true]]);
  assert.deepEqual(dump(reopened).map(([o, k]) => `${o}:${k}`), ['0:k0', '1:k1', '2:live', '3:after']);
  reopened.close();
  // And so is what the next opens find: after this clean shutdown (nothing re-validated) and after a crash.
  for (const clean of [true, false]) {
    const again = openLog(fs, clock, { cleanupPolicy: ['compact'] }, { clean });
    assert.deepEqual(dump(again).map(([o, k]) => `${o}:${k}`), ['0:k0', '1:k1', '2:live', '3:after'], `opened with clean=${clean}`);
    await again.appendAsLeader(batch(1, { key: () => 'next' }), 2);
    assert.deepEqual([...iterateBatches(again.read(0, 1 << 20, again.logEndOffset))].map((v) => v.verifyCrc()), [true, true, true, true], `opened with clean=${clean}`);
    again.truncateTo(4);
    again.close();
  }
});

test('a closed log refuses follower appends and truncation too', async () => {
  const { log } = setup();
  await log.appendAsLeader(batch(2), 0);
  log.close();
  const fetched = batch(1);
  fetched.writeBigInt64BE(2n, 0);
  assert.throws(() => log.appendAsFollower(fetched), (e: unknown) => e instanceof StorageError);
  assert.throws(() => log.truncateTo(1), (e: unknown) => e instanceof StorageError);
});

test('an append still validating when its topic is deleted is refused without taking the log directory offline, and a topic re-created under the name is left whole', async () => {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(10_000);
  const m = new LogManager({ dir: '/data', fs, clock, configFor: () => logConfig({ cleanupPolicy: ['compact'] }) });
  m.ensureMetaProperties(1, 'cluster-a');
  const old = m.getOrCreateLog('state', 0, 'AAECAwQFBgcICQoLDA0ODw');
  await old.appendAsLeader(batch(2), 0);
  const late = old.appendAsLeader(batch(3, { value: () => 'y'.repeat(300) }), 0);
  m.deleteLog('state', 0);
  const recreated = m.getOrCreateLog('state', 0, 'EBESExQVFhcYGRobHB0eHw');
  await recreated.appendAsLeader(batch(1, { key: () => 'new' }), 0);
  await assert.rejects(late, (e: unknown) => e instanceof StorageError);
  assert.equal(m.offline, null, 'the directory stays online');
  await recreated.appendAsLeader(batch(1, { key: () => 'next' }), 0);
  assert.deepEqual(dump(recreated).map(([o, k]) => `${o}:${k}`), ['0:new', '1:next']);
  m.close();
  await m.removalsDone();
});
