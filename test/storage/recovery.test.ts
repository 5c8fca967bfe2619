import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Prng } from '../../src/util/index.js';
import { StorageError } from '../../src/storage/index.js';
import { batch, dump, openLog, setup } from './helpers.js';

test('with flush.messages=1, a power cut loses nothing that was acknowledged, over 200 random cuts', async () => {
  const prng = new Prng(7);
  const { fs, clock } = setup();
  let acked: [number, string | null, string | null][] = [];
  let log = openLog(fs, clock, { flushMessages: 1, segmentBytes: 2000, indexIntervalBytes: 64 });
  for (let round = 0; round < 200; round++) {
    const appends = 1 + prng.int(5);
    for (let i = 0; i < appends; i++) {
      const n = 1 + prng.int(4);
      const r = await log.appendAsLeader(batch(n, { key: (j) => `r${round}-${j}`, value: (j) => `v${round}.${i}.${j}` }), 1);
      for (let j = 0; j < n; j++) acked.push([r.firstOffset + j, `r${round}-${j}`, `v${round}.${i}.${j}`]);
    }
    fs.crash(prng);
    log = openLog(fs, clock, { flushMessages: 1, segmentBytes: 2000, indexIntervalBytes: 64 }, { recoveryPoint: log.recoveryPoint });
    assert.deepEqual(dump(log), acked, `round ${round}`);
    assert.equal(log.logEndOffset, acked.length);
  }
});

test('without fsync, a power cut leaves a consistent prefix with contiguous offsets and indexes that agree with a scan', async () => {
  const prng = new Prng(11);
  const { fs, clock } = setup();
  const cfg = { segmentBytes: 1500, indexIntervalBytes: 64 };
  let log = openLog(fs, clock, cfg);
  let written: [number, string | null, string | null][] = [];
  for (let round = 0; round < 100; round++) {
    for (let i = 0; i < 1 + prng.int(6); i++) {
      const r = await log.appendAsLeader(batch(2, { value: (j) => `${round}.${i}.${j}` }), round);
      written.push([r.firstOffset, 'k0', `${round}.${i}.0`], [r.firstOffset + 1, 'k1', `${round}.${i}.1`]);
    }
    if (prng.next() < 0.3) log.flush();
    const flushedTo = log.recoveryPoint;
    fs.crash(prng);
    log = openLog(fs, clock, cfg, { recoveryPoint: flushedTo });
    const got = dump(log);
    assert.ok(got.length >= flushedTo, `round ${round}: ${got.length} records survived, ${flushedTo} were flushed`);
    assert.deepEqual(got, written.slice(0, got.length), `round ${round}: a prefix of what was written`);
    written = got;
    for (const seg of log.segments) {
      // Every index entry points at a batch whose last offset it names.
      for (let e = 0; e < seg.offsetIndex.entries; e++) {
        const h = seg.translateOffset(seg.offsetIndex.offsetAt(e));
        assert.equal(h?.position, seg.offsetIndex.positionAt(e));
      }
    }
    assert.ok(log.endOffsetForEpoch(round) === null || log.endOffsetForEpoch(round)!.endOffset <= log.logEndOffset);
  }
});

test('ENOSPC and EIO take the log offline with KAFKA_STORAGE_ERROR, never corrupt it, and a restart recovers', async () => {
  for (const fault of [{ op: 'write' as const, code: 'ENOSPC' as const, writtenBytes: 17 }, { op: 'sync' as const, code: 'EIO' as const }, { op: 'write' as const, code: 'EIO' as const }]) {
    const { fs, clock } = setup();
    let log = openLog(fs, clock, { flushMessages: 1 });
    for (let i = 0; i < 5; i++) await log.appendAsLeader(batch(2), 0);
    const before = dump(log);
    fs.inject({ ...fault, path: /\.log$/ });
    await assert.rejects(log.appendAsLeader(batch(2), 0), (e: unknown) => e instanceof StorageError && e.kind === 'KAFKA_STORAGE_ERROR', fault.code);
    assert.ok(log.offlineCause);
    await assert.rejects(log.appendAsLeader(batch(1), 0), (e: unknown) => e instanceof StorageError && e.kind === 'KAFKA_STORAGE_ERROR');
    assert.throws(() => log.read(0, 100, 10), (e: unknown) => e instanceof StorageError && e.kind === 'KAFKA_STORAGE_ERROR');
    fs.crash();
    log = openLog(fs, clock, { flushMessages: 1 }, { recoveryPoint: 10 });
    const after = dump(log);
    // The failed append may or may not have reached the disk, but the log is a valid prefix-extension.
    assert.deepEqual(after.slice(0, before.length), before);
    assert.ok(after.length === before.length || (fault.op === 'sync' && after.length === before.length + 2));
  }
  const { fs, clock } = setup();
  fs.capacityBytes = 600;
  const log = openLog(fs, clock, {});
  let ok = 0;
  try { for (;;) { await log.appendAsLeader(batch(2), 0); ok++; } } catch (e) { assert.ok(e instanceof StorageError && e.kind === 'KAFKA_STORAGE_ERROR'); }
  assert.ok(ok > 2);
});

test('property: after any sequence of appends, rolls, truncations, retention and reopens, reads by offset and time agree with a model', async () => {
  const op = fc.oneof(
    fc.record({ t: fc.constant('append' as const), n: fc.integer({ min: 1, max: 5 }), dt: fc.integer({ min: 0, max: 50 }) }),
    fc.record({ t: fc.constant('roll' as const) }),
    fc.record({ t: fc.constant('truncate' as const), back: fc.integer({ min: 0, max: 12 }) }),
    fc.record({ t: fc.constant('deleteRecords' as const), fwd: fc.integer({ min: 0, max: 6 }) }),
    fc.record({ t: fc.constant('retention' as const) }),
    fc.record({ t: fc.constant('reopen' as const), clean: fc.boolean() }),
  );
  await fc.assert(fc.asyncProperty(fc.array(op, { maxLength: 40 }), async (ops) => {
    const cfg = { segmentBytes: 400, indexIntervalBytes: 60, retentionBytes: 1500 };
    const { fs, clock } = setup();
    let log = openLog(fs, clock, cfg);
    // The model: offset -> [timestamp, value]; offsets below start are gone.
    let model: { offset: number; ts: number; value: string }[] = [];
    let ts = 20_000;
    let seq = 0;
    for (const o of ops) {
      if (o.t === 'append') {
        ts += o.dt;
        const r = await log.appendAsLeader(batch(o.n, { timestamp: ts, value: () => `s${seq}` }), 1);
        for (let j = 0; j < o.n; j++) model.push({ offset: r.firstOffset + j, ts: ts + j, value: `s${seq}` });
        seq++;
        ts += o.n;
      } else if (o.t === 'roll') log.roll();
      else if (o.t === 'truncate') {
        // Truncation happens at batch boundaries.
        const target = Math.max(log.logStartOffset, log.logEndOffset - o.back);
        const bytes = log.read(log.logStartOffset, 1 << 30, log.logEndOffset);
        const bounds = [...(await import('../../src/records/index.js')).iterateBatches(bytes)].map((v) => v.baseOffset).filter((b) => b <= target);
        const to = bounds.length ? Math.max(...bounds) : log.logStartOffset;
        log.truncateTo(to);
        model = model.filter((m) => m.offset < to);
        if (to <= log.logStartOffset) model = [];
      } else if (o.t === 'deleteRecords') {
        log.updateHighWatermark(log.logEndOffset);
        const to = Math.min(log.logEndOffset, log.logStartOffset + o.fwd);
        log.deleteRecordsBefore(to);
        model = model.filter((m) => m.offset >= to);
      } else if (o.t === 'retention') {
        log.deleteOldSegments(clock.nowMs());
        model = model.filter((m) => m.offset >= log.logStartOffset);
      } else {
        const rp = log.recoveryPoint; const lso = log.logStartOffset;
        if (o.clean) log.close(); else log.flush();
        log = openLog(fs, clock, cfg, { recoveryPoint: rp, clean: o.clean, logStartOffset: lso });
      }
      const got = dump(log).map(([offset, , value]) => ({ offset, value }));
      assert.deepEqual(got, model.map(({ offset, value }) => ({ offset, value })));
    }
    for (const m of model.filter((_, i) => i % 3 === 0)) {
      const found = await log.offsetForTimestamp(m.ts);
      const expected = model.find((x) => x.ts >= m.ts)!;
      assert.equal(found?.offset, expected.offset);
    }
  }), { numRuns: 60 });
});

test('a rolled segment is fsynced off the event loop: the recovery point passes it only when that is done; a failed fsync takes the log offline', async () => {
  const { fs, clock, log } = setup({ segmentBytes: 400 });
  while (log.segments.length < 3) await log.appendAsLeader(batch(3), 0);
  const rolledTo = log.activeSegment.baseOffset;
  assert.equal(log.recoveryPoint, 0, 'nothing is claimed durable before the background fsync finishes');
  // A power cut now: the rolled segments were never synced, so recovery scans from 0 and keeps a
  // consistent prefix (possibly empty) rather than trusting them.
  const before = fs.stats.syncs;
  await log.rolledSegmentsFlushed();
  assert.ok(fs.stats.syncs > before);
  assert.equal(log.recoveryPoint, rolledTo);
  fs.crash(new Prng(3));
  const again = openLog(fs, clock, { segmentBytes: 400 }, { recoveryPoint: rolledTo });
  assert.ok(again.logEndOffset >= rolledTo, 'everything below the recovery point survived the cut');
  assert.deepEqual(dump(again).slice(0, rolledTo).map(([o]) => o), Array.from({ length: rolledTo }, (_, i) => i));

  fs.inject({ op: 'sync', code: 'EIO', path: /\.log$/, repeat: true });
  const start = again.segments.length;
  while (again.segments.length === start) await again.appendAsLeader(batch(3), 0);
  await again.rolledSegmentsFlushed();
  await assert.rejects(again.appendAsLeader(batch(1), 0), (e: unknown) => e instanceof StorageError && e.kind === 'KAFKA_STORAGE_ERROR');
});

test('flushAsync makes what was appended before the call durable, and moves the recovery point there when it resolves', async () => {
  const { fs, clock, log } = setup({ segmentBytes: 400 });
  while (log.segments.length < 3) await log.appendAsLeader(batch(3), 0);
  await log.appendAsLeader(batch(2), 0);
  const end = log.logEndOffset;
  const flushed = log.flushAsync();
  // Appended after the call: a power cut may lose it.
  await log.appendAsLeader(batch(4), 0);
  assert.equal(log.recoveryPoint, 0, 'nothing is claimed durable before the fsync finishes');
  await flushed;
  assert.equal(log.recoveryPoint, end);
  fs.crash();
  const again = openLog(fs, clock, { segmentBytes: 400 }, { recoveryPoint: end });
  assert.equal(again.logEndOffset, end, 'exactly what was there at the call survived the cut');
  assert.deepEqual(dump(again).map(([o]) => o), Array.from({ length: end }, (_, i) => i));
  assert.equal(again.recovery.segmentsScanned, 1, 'only the segment holding the recovery point is re-validated');
});

test('flushAsync does not move the recovery point past a truncation made while it ran', async () => {
  const { log } = setup({ segmentBytes: 400 });
  for (let i = 0; i < 6; i++) await log.appendAsLeader(batch(3), 0);
  await log.flushAsync();
  const flushedTo = log.logEndOffset;
  for (let i = 0; i < 6; i++) await log.appendAsLeader(batch(3), 0);
  const flushed = log.flushAsync();
  log.truncateTo(flushedTo - 3);
  // The log grows past the offset the flush captured, with bytes that flush never saw.
  for (let i = 0; i < 6; i++) await log.appendAsLeader(batch(3), 0);
  await flushed;
  assert.equal(log.recoveryPoint, flushedTo - 3, 'the recovery point stays where the truncation left it');
  await log.flushAsync();
  assert.equal(log.recoveryPoint, log.logEndOffset);
});

test('a failed flushAsync takes the log offline', async () => {
  const { fs, log } = setup();
  await log.appendAsLeader(batch(3), 0);
  fs.inject({ op: 'sync', code: 'EIO', path: /\.log$/ });
  await assert.rejects(log.flushAsync(), (e: unknown) => e instanceof StorageError && e.kind === 'KAFKA_STORAGE_ERROR');
  assert.equal(log.recoveryPoint, 0);
  await assert.rejects(log.appendAsLeader(batch(1), 0), (e: unknown) => e instanceof StorageError && e.kind === 'KAFKA_STORAGE_ERROR');
  await assert.rejects(log.flushAsync(), (e: unknown) => e instanceof StorageError && e.kind === 'KAFKA_STORAGE_ERROR');
});

test('a real descriptor closed while its asynchronous fsync runs is released only when the fsync is done', async () => {
  const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { NodeFileSystem } = await import('../../src/storage/index.js');
  const dir = mkdtempSync(join(tmpdir(), 'logline-sync-async-'));
  try {
    const h = new NodeFileSystem().open(join(dir, 'f'), { create: true });
    h.write(Buffer.from('abc'), 0);
    const synced = h.syncAsync();
    h.close();
    await synced;
    assert.equal(readFileSync(join(dir, 'f'), 'utf8'), 'abc');
    await assert.rejects(h.syncAsync(), (e: unknown) => (e as { code?: string }).code === 'EBADF');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
