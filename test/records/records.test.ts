// Record iteration: build → iterate → equal for every codec (property-based), timestamps and
// offsets, the cursor and visitor paths, and corrupt bodies giving RecordsError only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  Compression, RecordBatchView, RecordCursor, RecordsError, TimestampType, buildRecordBatch, buildRecordBatchSync,
  decompressBatchBody, forEachRecord, iterateBatches, iterateRecords, readRecords, validateBatch, type RecordInput,
} from '../../src/records/index.js';
import { Prng } from '../../src/util/index.js';

const CODECS = [Compression.None, Compression.Gzip, Compression.Snappy, Compression.Lz4, Compression.Zstd];

const bytesArb = fc.option(fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), { nil: null, freq: 4 });
const recordArb: fc.Arbitrary<RecordInput> = fc.record({
  key: bytesArb,
  value: bytesArb,
  headers: fc.array(fc.record({ key: fc.string({ unit: 'grapheme', maxLength: 20 }), value: bytesArb }), { maxLength: 3 }),
  timestamp: fc.integer({ min: 0, max: 2 ** 45 }),
});
const batchArb = fc.record({
  records: fc.array(recordArb, { maxLength: 40 }),
  compression: fc.constantFrom(...CODECS),
  baseOffset: fc.integer({ min: 0, max: 2 ** 50 }),
  producerId: fc.integer({ min: -1, max: 2 ** 50 }),
  producerEpoch: fc.integer({ min: -1, max: 32767 }),
  baseSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
  partitionLeaderEpoch: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
  isTransactional: fc.boolean(),
});

test('build → iterate gives back the records for every codec (property)', async () => {
  await fc.assert(fc.asyncProperty(batchArb, async (opts) => {
    const buf = await buildRecordBatch(opts);
    const [view, ...rest] = [...iterateBatches(buf)];
    assert.equal(rest.length, 0);
    assert.ok(view!.verifyCrc());
    assert.equal(view!.compression, opts.compression);
    assert.equal(view!.recordCount, opts.records.length);
    assert.equal(view!.baseOffset, opts.baseOffset);
    assert.equal(view!.producerId, opts.producerId);
    if (opts.records.length > 0) {
      validateBatch(view!);
      assert.equal(view!.maxTimestamp, Math.max(...opts.records.map((r) => r.timestamp!)));
    }
    const got = await readRecords(view!);
    const plain = (r: RecordInput) => ({
      key: r.key, value: r.value, timestamp: r.timestamp, headers: (r.headers ?? []).map((h) => ({ key: h.key, value: h.value })),
    });
    assert.deepEqual(got.map(plain), opts.records.map(plain));
    assert.deepEqual(got.map((r) => r.offset), opts.records.map((_, i) => opts.baseOffset + i));
  }), { numRuns: 300 });
});

test('large records (1 MiB values) round-trip through every codec', async () => {
  const prng = new Prng(7);
  const big = Buffer.alloc(1 << 20);
  for (let i = 0; i < big.length; i++) big[i] = 97 + prng.int(8);
  for (const compression of CODECS) {
    const buf = await buildRecordBatch({ compression, records: [{ value: big, key: Buffer.from('k') }, { value: null }] });
    const records = await readRecords(new RecordBatchView(buf));
    assert.ok(records[0]!.value!.equals(big), Compression[compression]);
    assert.equal(records[1]!.value, null);
  }
});

test('uncompressed bodies are zero-copy: keys and values are views into the batch', async () => {
  const buf = buildRecordBatchSync({ records: [{ key: Buffer.from('k'), value: Buffer.from('v') }] });
  const view = new RecordBatchView(buf);
  const body = await decompressBatchBody(view);
  assert.equal(body.buffer, buf.buffer);
  const [r] = [...iterateRecords(view, body)];
  assert.equal(r!.key!.buffer, buf.buffer);
  assert.equal(r!.value!.toString(), 'v');
});

test('explicit offset deltas and timestamps give offsets, lastOffset and negative timestamp deltas', () => {
  const buf = buildRecordBatchSync({
    baseOffset: 100,
    baseTimestamp: 5000,
    records: [{ value: null, offsetDelta: 0, timestamp: 4000 }, { value: null, offsetDelta: 3, timestamp: 9000 }],
  });
  const view = new RecordBatchView(buf);
  assert.equal(view.lastOffset, 103);
  assert.equal(view.maxTimestamp, 9000);
  validateBatch(view, { compacted: true });
  const got = [...iterateRecords(view, view.bytes().subarray(61))];
  assert.deepEqual(got.map((r) => [r.offset, r.offsetDelta, r.timestamp, r.timestampDelta]), [[100, 0, 4000, -1000], [103, 3, 9000, 4000]]);
});

test('records of a LogAppendTime batch all carry the batch maxTimestamp', () => {
  const buf = buildRecordBatchSync({ records: [{ value: null, timestamp: 1 }, { value: null, timestamp: 2 }] });
  const view = new RecordBatchView(buf);
  view.setLogAppendTime(99_000);
  assert.equal(view.timestampType, TimestampType.LogAppendTime);
  validateBatch(view);
  assert.deepEqual([...iterateRecords(view, view.bytes().subarray(61))].map((r) => r.timestamp), [99_000, 99_000]);
});

test('forEachRecord and the cursor see the same records as the generator without copying', () => {
  const records = Array.from({ length: 50 }, (_, i) => ({ key: i % 2 ? null : Buffer.from(`k${i}`), value: Buffer.from(`v${i}`) }));
  const buf = buildRecordBatchSync({ records, baseOffset: 10 });
  const view = new RecordBatchView(buf);
  const body = buf.subarray(61);
  const seen: string[] = [];
  forEachRecord(view, body, (c: RecordCursor) => {
    seen.push(`${c.offset}:${c.keyLength < 0 ? 'null' : body.toString('utf8', c.keyStart, c.keyStart + c.keyLength)}:${c.value()!.toString()}`);
  });
  assert.deepEqual(seen, [...iterateRecords(view, body)].map((r) => `${r.offset}:${r.key?.toString() ?? 'null'}:${r.value!.toString()}`));
});

function isRecordsErrorOnly(e: unknown): boolean {
  return e instanceof RecordsError;
}

test('bit flips, truncations and huge varints in a body throw RecordsError only (no CRC check)', () => {
  const prng = new Prng(1234);
  const records = Array.from({ length: 20 }, (_, i) => ({
    key: Buffer.from(`key-${i}`), value: Buffer.alloc(i * 5, 120), headers: i % 4 ? [] : [{ key: 'h', value: Buffer.from('x') }],
  }));
  const good = buildRecordBatchSync({ records });
  let thrown = 0;
  for (let n = 0; n < 5000; n++) {
    const b = Buffer.from(good);
    const kind = prng.int(4);
    let body = b.subarray(61);
    if (kind === 0) for (let f = 0; f < 1 + prng.int(3); f++) body[prng.int(body.length)]! ^= 1 << prng.int(8);
    else if (kind === 1) body = body.subarray(0, prng.int(body.length));
    else if (kind === 2) { const at = prng.int(body.length - 5); body.set([0xff, 0xff, 0xff, 0xff, 0x0f], at); }
    else { const at = prng.int(body.length - 10); body.fill(0xff, at, at + 10); }
    if (prng.int(4) === 0) b.writeInt32BE(prng.int(2) ? 0x7fffffff : -prng.int(100), 57);
    const view = new RecordBatchView(b);
    try {
      let count = 0;
      for (const r of iterateRecords(view, body)) {
        count++;
        assert.ok(r.value === null || r.value.length <= body.length);
        assert.ok(r.key === null || r.key.length <= body.length);
      }
      assert.equal(count, view.recordCount);
    } catch (e) {
      assert.ok(isRecordsErrorOnly(e), `mutation ${n} (kind ${kind}) threw ${String(e)}`);
      assert.equal((e as RecordsError).code, 'CORRUPT_MESSAGE');
      thrown++;
    }
  }
  assert.ok(thrown > 1000, `only ${thrown} mutations were caught`);
});

test('whole-batch mutations fed through iterateBatches/validateBatch/readRecords throw RecordsError only', async () => {
  const prng = new Prng(99);
  for (const compression of CODECS) {
    const good = await buildRecordBatch({ compression, records: Array.from({ length: 30 }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`{"i":${i},"pad":"${'z'.repeat(i)}"}`) })) });
    for (let n = 0; n < 300; n++) {
      const b = Buffer.from(good);
      if (prng.int(2)) for (let f = 0; f < 1 + prng.int(3); f++) b[prng.int(b.length)]! ^= 1 << prng.int(8);
      else b.writeInt32BE(prng.int(2) ? 0x7fffffff : prng.int(1 << 20), prng.int(b.length - 4));
      const skipCrc = prng.int(2) === 0;
      try {
        for (const view of iterateBatches(b, { allowPartialTail: prng.int(2) === 0 })) {
          if (skipCrc) view.updateCrc(); else validateBatch(view);
          await readRecords(view);
        }
      } catch (e) {
        assert.ok(isRecordsErrorOnly(e), `${Compression[compression]} mutation ${n} threw ${String(e)}`);
      }
    }
  }
});

test('a body with bytes left after recordCount records, or fewer records, is corrupt', () => {
  const buf = buildRecordBatchSync({ records: [{ value: Buffer.from('a') }, { value: Buffer.from('b') }] });
  const view = new RecordBatchView(Buffer.from(buf));
  view.buf.writeInt32BE(1, 57);
  assert.throws(() => [...iterateRecords(view, view.buf.subarray(61))], /bytes remain/);
  view.buf.writeInt32BE(3, 57);
  assert.throws(() => [...iterateRecords(view, view.buf.subarray(61))], (e: unknown) => e instanceof RecordsError && e.code === 'CORRUPT_MESSAGE');
});
