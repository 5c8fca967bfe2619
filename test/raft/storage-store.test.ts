import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryLogStore, RECOVERY_POINT_FILE, StorageLogStore, TRUNCATION_REPAIR_FILE, raftWire, snapshotFileName, batchesOf, entriesOf, type Entry, type LoadedLog, type LogOp } from '../../src/raft/index.js';
import { MemoryFileSystem } from '../../src/storage/index.js';
import { iterateBatches } from '../../src/records/index.js';
import { ManualClock, Prng } from '../../src/util/index.js';
import { enc, entries } from './helpers.js';

function tempDir(): string { return mkdtempSync(join(tmpdir(), 'raft-storage-store-')); }

/** Small index files: MemoryFileSystem allocates them in full. */
const smallIndexes = { segmentIndexBytes: 4096 };

function summary(l: LoadedLog): { snapshot: [number, number, number[]] | undefined; entries: [number, number, string, number[]][] } {
  return {
    snapshot: l.snapshot === undefined ? undefined : [l.snapshot.id.endOffset, l.snapshot.id.epoch, [...l.snapshot.data]],
    entries: entriesOf(l.batches).map((e) => [e.offset, e.epoch, e.kind, [...e.value]]),
  };
}

test('the storage log replays appends, truncations and snapshots from a Kafka partition directory, and drops a torn tail', () => {
  const dir = join(tempDir(), '__cluster_metadata-0');
  try {
    const log = new StorageLogStore(dir);
    assert.deepEqual(summary(log.load()), { snapshot: undefined, entries: [] });
    const control: Entry = { offset: 4, epoch: 2, kind: 'control', value: enc.encode('leader-change') };
    log.apply([{ kind: 'append', batches: batchesOf([...entries([1, 1, 1, 2]), control]) }]);
    log.apply([{ kind: 'truncate', offset: 3 }, { kind: 'append', batches: batchesOf(entries([3, 3], 3)) }]);
    log.apply([{ kind: 'snapshot', snapshot: { id: { endOffset: 2, epoch: 1 }, data: new Uint8Array([7, 8]) }, replaceLog: false }]);
    log.sync();
    // One batch per run of (epoch, kind); offsets and epochs are Raft's.
    const segment = readdirSync(dir).find((n) => n.endsWith('.log'))!;
    log.close();
    assert.ok(readdirSync(dir).includes(snapshotFileName(2, 1)), readdirSync(dir).join(' '));
    assert.equal(snapshotFileName(2, 1), '00000000000000000002-0000000001.checkpoint');
    appendFileSync(join(dir, segment), Buffer.from([0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 50, 1, 2, 3]));
    const reopened = new StorageLogStore(dir);
    const loaded = reopened.load();
    assert.deepEqual(loaded.snapshot?.id, { endOffset: 2, epoch: 1 });
    assert.deepEqual([...loaded.snapshot!.data], [7, 8]);
    assert.deepEqual(entriesOf(loaded.batches).map((e) => [e.offset, e.epoch, e.kind]), [[2, 1, 'data'], [3, 3, 'data'], [4, 3, 'data']]);
    assert.equal(new TextDecoder().decode(entriesOf(loaded.batches)[1]!.value), 'e3-3');
    assert.ok(reopened.partitionLog.recovery.bytesTruncated > 0, 'the torn tail was cut');
    const batches = [...iterateBatches(reopened.partitionLog.read(2, 1 << 20, 100))].map((b) => [b.baseOffset, b.lastOffset, b.partitionLeaderEpoch, b.isControl]);
    assert.deepEqual(batches, [[0, 2, 1, false], [3, 4, 3, false]]);
    // Control entries go in control batches and come back as control entries.
    reopened.apply([{ kind: 'append', batches: batchesOf([{ ...control, offset: 5, epoch: 4 }]) }]);
    reopened.sync();
    reopened.close();
    const again = new StorageLogStore(dir);
    const last = entriesOf(again.load().batches).at(-1)!;
    assert.deepEqual([last.offset, last.epoch, last.kind, new TextDecoder().decode(last.value)], [5, 4, 'control', 'leader-change']);
    assert.equal([...iterateBatches(again.partitionLog.read(5, 1 << 20, 100))][0]!.isControl, true);
    // A snapshot that replaces the log restarts it at the snapshot and removes the older snapshot.
    again.apply([{ kind: 'snapshot', snapshot: { id: { endOffset: 10, epoch: 5 }, data: new Uint8Array([9]) }, replaceLog: true }]);
    again.apply([{ kind: 'append', batches: batchesOf(entries([5], 10)) }]);
    again.sync();
    again.close();
    const files = readdirSync(dir);
    assert.deepEqual(files.filter((n) => n.endsWith('.checkpoint')), [snapshotFileName(10, 5)]);
    assert.deepEqual(files.filter((n) => n.endsWith('.log')), ['00000000000000000010.log']);
    assert.deepEqual(summary(new StorageLogStore(dir).load()), { snapshot: [10, 5, [9]], entries: [[10, 5, 'data', [...enc.encode('e5-10')]]] });
  } finally { rmSync(join(dir, '..'), { recursive: true }); }
});

test('an append that does not continue the log is refused', () => {
  const log = new StorageLogStore('/m/__cluster_metadata-0', { fs: new MemoryFileSystem(), config: smallIndexes });
  log.load();
  log.apply([{ kind: 'append', batches: batchesOf(entries([1, 1])) }]);
  assert.throws(() => log.apply([{ kind: 'append', batches: batchesOf(entries([1], 5)) }]), /does not continue/);
});

/** The log after `ops`, as MemoryLogStore folds them. */
function fold(ops: readonly LogOp[]): LoadedLog {
  const m = new MemoryLogStore();
  m.apply(ops);
  m.sync();
  return m.load();
}

/**
 * Every state a power cut may leave once `ops[0..synced)` are durable: the state after any longer
 * prefix of ops, an append cut after any of its entries, and a snapshot whose log deletion did not
 * happen (the snapshot with the older entries above it, those of an older epoch dropped).
 */
function allowedStates(ops: readonly LogOp[], synced: number): Set<string> {
  const out = new Set<string>();
  const add = (l: LoadedLog) => out.add(JSON.stringify(summary(l)));
  for (let k = synced; k <= ops.length; k++) {
    const before = fold(ops.slice(0, k));
    add(before);
    const op = ops[k];
    if (op?.kind === 'append') {
      for (let n = 1; n < entriesOf(op.batches).length; n++) add(fold([...ops.slice(0, k), { kind: 'append', batches: batchesOf(entriesOf(op.batches).slice(0, n)) }]));
    } else if (op?.kind === 'snapshot') {
      const above = entriesOf(before.batches).filter((e) => e.offset >= op.snapshot.id.endOffset);
      const stale = above.findIndex((e) => e.epoch < op.snapshot.id.epoch);
      add({ snapshot: op.snapshot, batches: batchesOf(stale < 0 ? above : above.slice(0, stale)) });
    } else if (op?.kind === 'truncate') {
      // A truncation spanning segments may be cut after dropping whole segments.
      for (let o = op.offset + 1; o < (entriesOf(before.batches).at(-1)?.offset ?? -1) + 1; o++) add(fold([...ops.slice(0, k), { kind: 'truncate', offset: o }]));
    }
  }
  return out;
}

test('a power cut keeps everything synced and leaves a prefix of what was applied, over random appends, truncations and snapshots', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    const prng = new Prng(seed);
    const fs = new MemoryFileSystem();
    const dir = '/meta/__cluster_metadata-0';
    // Small segments, so truncations and snapshots cross segment boundaries.
    const config = { ...smallIndexes, segmentBytes: seed % 2 === 0 ? 600 : 1 << 20 };
    let store = new StorageLogStore(dir, { fs, config });
    store.load();
    let ops: LogOp[] = [];
    let synced = 0;
    let epoch = 1;
    for (let round = 0; round < 40; round++) {
      const steps = 1 + prng.int(6);
      for (let s = 0; s < steps; s++) {
        const state = fold(ops);
        const start = state.snapshot?.id.endOffset ?? 0;
        const end = entriesOf(state.batches).at(-1) !== undefined ? entriesOf(state.batches).at(-1)!.offset + 1 : start;
        const r = prng.next();
        let op: LogOp;
        if (r < 0.6 || end === start) {
          if (prng.next() < 0.2) epoch++;
          const n = 1 + prng.int(5);
          const es: Entry[] = [];
          for (let i = 0; i < n; i++) {
            const kind = prng.next() < 0.15 ? 'control' : 'data';
            es.push({ offset: end + i, epoch, kind, value: enc.encode(`s${seed}r${round}.${s}.${i}${'x'.repeat(prng.int(40))}`) });
          }
          op = { kind: 'append', batches: batchesOf(es) };
        } else if (r < 0.8) {
          op = { kind: 'truncate', offset: start + prng.int(end - start) };
          epoch++;
        } else {
          const replaceLog = prng.next() < 0.3;
          const endOffset = replaceLog ? end + prng.int(4) : start + 1 + prng.int(end - start);
          if (replaceLog) epoch++;
          const snapEpoch = replaceLog ? epoch : entriesOf(state.batches).find((e) => e.offset === endOffset - 1)!.epoch;
          op = { kind: 'snapshot', snapshot: { id: { endOffset, epoch: snapEpoch }, data: enc.encode(`snap${seed}.${round}.${s}`) }, replaceLog };
        }
        store.apply([op]);
        ops.push(op);
        if (prng.next() < 0.3) { store.sync(); synced = ops.length; }
      }
      fs.crash(prng);
      store = new StorageLogStore(dir, { fs, config });
      const loaded = store.load();
      const got = JSON.stringify(summary(loaded));
      const allowed = allowedStates(ops, synced);
      if (!allowed.has(got)) console.log(JSON.stringify(ops.map((o) => o.kind === "append" ? ["a", entriesOf(o.batches)[0]!.offset, entriesOf(o.batches).length, entriesOf(o.batches)[0]!.epoch] : o.kind === "truncate" ? ["t", o.offset] : ["s", o.snapshot.id, o.replaceLog])), synced, fs.list(dir));
      assert.ok(allowed.has(got), `seed ${seed} round ${round}: loaded ${got}\nnot one of ${[...allowed].join('\n')}`);
      // Carry on from what survived, as a restarted node does.
      ops = [{ kind: 'snapshot', snapshot: loaded.snapshot ?? { id: { endOffset: 0, epoch: 0 }, data: new Uint8Array() }, replaceLog: true }];
      if (loaded.snapshot === undefined) ops = [];
      if (entriesOf(loaded.batches).length > 0) ops.push({ kind: 'append', batches: batchesOf(entriesOf(loaded.batches)) });
      synced = ops.length;
      epoch = Math.max(epoch, (entriesOf(loaded.batches).at(-1)?.epoch ?? 0), loaded.snapshot?.id.epoch ?? 0);
    }
  }
});

test('a truncation inside a batch keeps the entries below the cut, and one a crash interrupted is finished on load', () => {
  const fs = new MemoryFileSystem();
  const dir = '/m/__cluster_metadata-0';
  const store = new StorageLogStore(dir, { fs, config: smallIndexes });
  store.load();
  store.apply([{ kind: 'append', batches: batchesOf(entries([1, 1, 1, 1, 1, 1])) }]);
  store.apply([{ kind: 'truncate', offset: 4 }]);
  assert.deepEqual(entriesOf(store.load().batches).map((e) => e.offset), [0, 1, 2, 3]);
  assert.ok(!fs.exists(join(dir, TRUNCATION_REPAIR_FILE)));
  // A crash after the repair file was written, before the truncation reached the disk.
  store.apply([{ kind: 'append', batches: batchesOf(entries([2, 2, 2], 4)) }]);
  store.sync();
  fs.writeFileAtomic(join(dir, TRUNCATION_REPAIR_FILE), raftWire.encodeEntries(batchesOf(entries([2], 4))));
  fs.crash();
  const reloaded = new StorageLogStore(dir, { fs, config: smallIndexes });
  assert.deepEqual(entriesOf(reloaded.load().batches).map((e) => [e.offset, e.epoch]), [[0, 1], [1, 1], [2, 1], [3, 1], [4, 2]]);
  assert.ok(!fs.exists(join(dir, TRUNCATION_REPAIR_FILE)));
});

function syncAsync(store: StorageLogStore, order: number[], n: number): Promise<Error | null> {
  return new Promise((resolve) => store.syncAsync!((err) => { order.push(n); resolve(err); }));
}

test('syncAsync makes what was applied before the call durable, completing in call order; a failed fsync reaches done', async () => {
  const fs = new MemoryFileSystem();
  const dir = '/meta/__cluster_metadata-0';
  const config = { ...smallIndexes, segmentBytes: 600 };
  const store = new StorageLogStore(dir, { fs, config });
  store.load();
  const order: number[] = [];
  const waits: Promise<Error | null>[] = [];
  for (let i = 0; i < 20; i++) {
    store.apply([{ kind: 'append', batches: batchesOf(entries([1, 1, 1], 3 * i)) }]);
    waits.push(syncAsync(store, order, i));
  }
  const last = syncAsync(store, order, 20);
  // Applied after the last call: a power cut may lose it.
  store.apply([{ kind: 'append', batches: batchesOf(entries([1, 1], 60)) }]);
  assert.deepEqual(await Promise.all(waits), waits.map(() => null));
  assert.equal(await last, null);
  assert.deepEqual(order, Array.from({ length: 21 }, (_, i) => i));
  assert.ok(store.partitionLog.segments.length > 2, 'the appends crossed segments');
  fs.crash();
  const again = new StorageLogStore(dir, { fs, config });
  assert.deepEqual(entriesOf(again.load().batches).map((e) => e.offset), Array.from({ length: 60 }, (_, i) => i));
  fs.inject({ op: 'sync', code: 'EIO', path: /\.log$/ });
  again.apply([{ kind: 'append', batches: batchesOf(entries([2], 60)) }]);
  const err = await syncAsync(again, [], 0);
  assert.ok(err !== null && /KAFKA_STORAGE_ERROR|I\/O error/.test(`${(err as { kind?: string }).kind} ${err.message}`), String(err));
});

test('a restart re-validates only the segment holding the saved recovery point; a truncation below it lowers the saved one at once', () => {
  const fs = new MemoryFileSystem();
  const dir = '/meta/__cluster_metadata-0';
  const config = { ...smallIndexes, segmentBytes: 600 };
  let store = new StorageLogStore(dir, { fs, config });
  store.load();
  for (let i = 0; i < 30; i++) store.apply([{ kind: 'append', batches: batchesOf(entries([1, 1, 1], 3 * i)) }]);
  store.sync();
  const segments = store.partitionLog.segments.length;
  assert.ok(segments > 3);
  store.close();
  const saved = () => fs.readFile(join(dir, RECOVERY_POINT_FILE)).toString('utf8');
  assert.equal(saved(), '0\n1\n__cluster_metadata 0 90\n');
  store = new StorageLogStore(dir, { fs, config });
  assert.equal(entriesOf(store.load().batches).length, 90);
  assert.equal(store.partitionLog.recovery.segmentsScanned, 1);
  store.apply([{ kind: 'truncate', offset: 30 }]);
  assert.equal(saved(), '0\n1\n__cluster_metadata 0 30\n', 'the truncation lowered the saved recovery point');
  // Appends past the saved point, never synced, and a power cut: recovery must re-validate them.
  for (let i = 10; i < 30; i++) store.apply([{ kind: 'append', batches: batchesOf(entries([2, 2, 2], 3 * i)) }]);
  fs.crash(new Prng(5));
  store = new StorageLogStore(dir, { fs, config });
  const loaded = entriesOf(store.load().batches);
  assert.ok(loaded.length >= 30);
  assert.deepEqual(loaded.map((e) => e.offset), Array.from({ length: loaded.length }, (_, i) => i));
  assert.ok(store.partitionLog.recovery.segmentsScanned < segments, 'recovery started at the saved point, not at 0');
  store.close();
});

test('a flush rewrites the saved recovery point at most once per interval, never above what is fsynced', async () => {
  const fs = new MemoryFileSystem();
  const dir = '/meta/__cluster_metadata-0';
  const clock = new ManualClock(0);
  const store = new StorageLogStore(dir, { fs, config: smallIndexes, clock, recoveryCheckpointIntervalMs: 1000 });
  store.load();
  const saved = () => (fs.exists(join(dir, RECOVERY_POINT_FILE)) ? fs.readFile(join(dir, RECOVERY_POINT_FILE)).toString('utf8') : '');
  store.apply([{ kind: 'append', batches: batchesOf(entries([1, 1])) }]);
  assert.equal(await syncAsync(store, [], 0), null);
  assert.equal(saved(), '', 'not before the interval');
  clock.advance(1000);
  store.apply([{ kind: 'append', batches: batchesOf(entries([1], 2)) }]);
  const p = syncAsync(store, [], 1);
  store.apply([{ kind: 'append', batches: batchesOf(entries([1], 3)) }]);
  assert.equal(await p, null);
  assert.equal(saved(), '0\n1\n__cluster_metadata 0 3\n', 'the end at the call, not the end now');
  store.close();
  assert.equal(saved(), '0\n1\n__cluster_metadata 0 4\n');
});
