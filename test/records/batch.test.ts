// The RecordBatch v2 header view, CRC32C, the batch walker and produce-side validation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  RECORD_BATCH_HEADER_BYTES, Compression, RecordBatchView, RecordsError, TimestampType, buildRecordBatch, buildRecordBatchSync,
  crc32c, crc32cCombine, crc32cZerosOperator, firstBatchProducer, iterateBatches, readRecords, recordBatchAt, validateBatch,
} from '../../src/records/index.js';
import { crc32cJs } from '../../src/records/crc32c.js';
import { legacyMessage } from '../fixtures/legacy-encoder.js';

function isRecordsError(code: string) {
  return (e: unknown) => e instanceof RecordsError && e.code === code;
}

function sampleBatch(n = 3, extra: Parameters<typeof buildRecordBatchSync>[0] extends infer O ? Partial<O> : never = {}): Buffer {
  const records = Array.from({ length: n }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`value-${i}`), timestamp: 1_700_000_000_000 + i * 10 }));
  return buildRecordBatchSync({ records, baseOffset: 0, producerId: 42, producerEpoch: 3, baseSequence: 7, ...extra });
}

test('crc32c matches the standard check vectors (RFC 3720 and "123456789")', () => {
  const vectors: [Buffer, number][] = [
    [Buffer.from('123456789'), 0xe3069283],
    [Buffer.alloc(32), 0x8a9136aa],
    [Buffer.alloc(32, 0xff), 0x62a8ab43],
    [Buffer.from(Array.from({ length: 32 }, (_, i) => i)), 0x46dd794e],
    [Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i)), 0x113fdb5c],
    [Buffer.alloc(0), 0],
  ];
  for (const [input, expected] of vectors) {
    assert.equal(crc32c(input), expected, `native ${input.toString('hex')}`);
    assert.equal(crc32cJs(input), expected, `js ${input.toString('hex')}`);
  }
});

test('crc32c continues from an initial value: crc(a+b) == crc32c(b, crc32c(a))', () => {
  const data = Buffer.from('the quick brown fox jumps over the lazy dog');
  for (const cut of [0, 1, 10, data.length]) {
    assert.equal(crc32c(data.subarray(cut), crc32c(data.subarray(0, cut))), crc32c(data));
    assert.equal(crc32cJs(data.subarray(cut), crc32cJs(data.subarray(0, cut))), crc32c(data));
  }
});

test('the header view reads every field of a built batch', () => {
  const buf = sampleBatch(3, { baseOffset: 1000, partitionLeaderEpoch: 5, isTransactional: true });
  const v = new RecordBatchView(buf);
  assert.equal(RECORD_BATCH_HEADER_BYTES, 61);
  assert.equal(v.baseOffset, 1000);
  assert.equal(v.sizeInBytes, buf.length);
  assert.equal(v.batchLength, buf.length - 12);
  assert.equal(v.partitionLeaderEpoch, 5);
  assert.equal(v.magic, 2);
  assert.equal(v.compression, Compression.None);
  assert.equal(v.timestampType, TimestampType.CreateTime);
  assert.equal(v.isTransactional, true);
  assert.equal(v.isControl, false);
  assert.equal(v.hasDeleteHorizon, false);
  assert.equal(v.lastOffsetDelta, 2);
  assert.equal(v.lastOffset, 1002);
  assert.equal(v.baseTimestamp, 1_700_000_000_000);
  assert.equal(v.maxTimestamp, 1_700_000_000_020);
  assert.equal(v.producerId, 42);
  assert.equal(v.producerEpoch, 3);
  assert.equal(v.baseSequence, 7);
  assert.equal(v.recordCount, 3);
  assert.ok(v.verifyCrc());
  assert.equal(v.bytes().buffer, buf.buffer, 'bytes() is a view, not a copy');
});

test('int64 fields hold -1 and large safe offsets, and reject unsafe ones', () => {
  const buf = sampleBatch(1, { producerId: -1 });
  const v = new RecordBatchView(buf);
  assert.equal(v.producerId, -1);
  v.baseOffset = Number.MAX_SAFE_INTEGER - 10;
  assert.equal(v.baseOffset, Number.MAX_SAFE_INTEGER - 10);
  assert.equal(buf.readBigInt64BE(0), BigInt(Number.MAX_SAFE_INTEGER - 10));
  v.baseOffset = -1;
  assert.equal(buf.readBigInt64BE(0), -1n);
  buf.writeBigInt64BE(2n ** 62n, 0);
  assert.throws(() => v.baseOffset, isRecordsError('CORRUPT_MESSAGE'));
  assert.throws(() => { v.baseOffset = 2 ** 60; }, RangeError);
});

test('baseOffset and partitionLeaderEpoch rewrite in place and leave the CRC valid', () => {
  const buf = sampleBatch(2);
  const crcBefore = new RecordBatchView(buf).crc;
  const v = new RecordBatchView(buf);
  v.baseOffset = 123_456_789_012;
  v.partitionLeaderEpoch = 77;
  assert.equal(v.baseOffset, 123_456_789_012);
  assert.equal(v.partitionLeaderEpoch, 77);
  assert.equal(v.crc, crcBefore);
  assert.ok(v.verifyCrc());
  validateBatch(v);
});

test('setLogAppendTime sets the timestamp-type bit and maxTimestamp, and recomputes the CRC', () => {
  const buf = sampleBatch(2);
  const v = new RecordBatchView(buf);
  v.setLogAppendTime(1_800_000_000_000);
  assert.equal(v.timestampType, TimestampType.LogAppendTime);
  assert.equal(v.maxTimestamp, 1_800_000_000_000);
  assert.ok(v.verifyCrc());
  v.maxTimestamp = 5;
  assert.equal(v.maxTimestamp, 5);
  assert.ok(v.verifyCrc());
});

test('a flipped bit inside the CRC range fails verifyCrc and validateBatch', () => {
  const buf = sampleBatch(3);
  for (const at of [21, 30, 60, buf.length - 1]) {
    const copy = Buffer.from(buf);
    copy[at]! ^= 0x10;
    const v = new RecordBatchView(copy);
    assert.equal(v.verifyCrc(), false, `byte ${at}`);
    assert.throws(() => validateBatch(v), isRecordsError('CORRUPT_MESSAGE'));
  }
});

test('iterateBatches walks concatenated batches and handles a partial tail as asked', () => {
  const a = sampleBatch(1, { baseOffset: 0 });
  const b = sampleBatch(2, { baseOffset: 1 });
  const all = Buffer.concat([a, b]);
  assert.deepEqual([...iterateBatches(all)].map((v) => [v.offset, v.baseOffset, v.recordCount]), [[0, 0, 1], [a.length, 1, 2]]);
  for (const cut of [1, 16, 17, 61, b.length - 1]) {
    const partial = all.subarray(0, a.length + cut);
    assert.deepEqual([...iterateBatches(partial, { allowPartialTail: true })].map((v) => v.baseOffset), [0], `cut ${cut}`);
    assert.throws(() => [...iterateBatches(partial)], isRecordsError('CORRUPT_MESSAGE'), `cut ${cut}`);
  }
  assert.deepEqual([...iterateBatches(Buffer.alloc(0))], []);
});

test('iterateBatches rejects bad lengths and magic even when partial tails are allowed', () => {
  const bad = Buffer.from(sampleBatch(1));
  bad.writeInt32BE(10, 8);
  assert.throws(() => [...iterateBatches(bad, { allowPartialTail: true })], isRecordsError('CORRUPT_MESSAGE'));
  for (const [magic, code] of [[0, 'UNSUPPORTED_MAGIC'], [1, 'UNSUPPORTED_MAGIC'], [3, 'CORRUPT_MESSAGE'], [-1, 'CORRUPT_MESSAGE']] as const) {
    const m = Buffer.from(sampleBatch(1));
    m.writeInt8(magic, 16);
    assert.throws(() => [...iterateBatches(m, { allowPartialTail: true })], isRecordsError(code), `magic ${magic}`);
    assert.throws(() => validateBatch(new RecordBatchView(m)), isRecordsError(code), `magic ${magic}`);
  }
});

test('a legacy message shorter than a v2 header is UNSUPPORTED_MAGIC, not a bad batch length', () => {
  const legacy = legacyMessage({ magic: 0, key: null, value: Buffer.from('v'), offset: 0 });
  assert.ok(legacy.length < RECORD_BATCH_HEADER_BYTES);
  assert.throws(() => [...iterateBatches(legacy)], isRecordsError('UNSUPPORTED_MAGIC'));
});

test('recordBatchAt and firstBatchProducer see RecordBatch v2 only: a legacy set with the transactional bit at the attributes offset has no producer', () => {
  const v2 = Buffer.concat([sampleBatch(1), sampleBatch(2, { isTransactional: true, producerId: 7, producerEpoch: 1 })]);
  assert.deepEqual(firstBatchProducer(v2), { producerId: 42n, producerEpoch: 3, isTransactional: false });
  const second = recordBatchAt(v2, sampleBatch(1).length);
  assert.deepEqual([second?.isTransactional, second?.producerId], [true, 7]);
  assert.equal(recordBatchAt(v2, v2.length - 10), null, 'fewer bytes than a header');
  // 'p' (0x70) is the key's first byte at offset 22, where a v2 batch's attributes have 0x10.
  const legacy = legacyMessage({ magic: 0, key: Buffer.from('pay'), value: Buffer.alloc(100), offset: 0 });
  assert.ok(legacy.length >= RECORD_BATCH_HEADER_BYTES && (legacy.readInt16BE(21) & 0x10) !== 0);
  assert.equal(recordBatchAt(legacy), null);
  assert.equal(firstBatchProducer(legacy), null);
  assert.equal(firstBatchProducer(Buffer.alloc(10)), null);
});

test('validateBatch accepts good batches and rejects inconsistent counts and unknown codecs', () => {
  validateBatch(new RecordBatchView(sampleBatch(5)), { fromClient: true });
  assert.throws(() => validateBatch(new RecordBatchView(sampleBatch(1, { baseOffset: 9 })), { fromClient: true }), isRecordsError('INVALID_RECORD'));
  const withCrc = (mutate: (b: Buffer) => void): RecordBatchView => {
    const buf = Buffer.from(sampleBatch(3));
    mutate(buf);
    const v = new RecordBatchView(buf);
    v.updateCrc();
    return v;
  };
  assert.throws(() => validateBatch(withCrc((b) => b.writeInt32BE(5, 23))), isRecordsError('INVALID_RECORD'));
  assert.throws(() => validateBatch(withCrc((b) => b.writeInt32BE(-1, 57))), isRecordsError('INVALID_RECORD'));
  assert.throws(() => validateBatch(withCrc((b) => b.writeInt16BE(6, 21))), isRecordsError('UNSUPPORTED_COMPRESSION_TYPE'));
  assert.throws(() => validateBatch(withCrc((b) => b.writeInt32BE(1 << 24, 57))), isRecordsError('INVALID_RECORD'));
  // A compacted batch may hold fewer records than its offset range.
  validateBatch(withCrc((b) => b.writeInt32BE(9, 23)), { compacted: true });
  const empty = new RecordBatchView(buildRecordBatchSync({ records: [] }));
  assert.throws(() => validateBatch(empty), isRecordsError('INVALID_RECORD'));
  const overrun = Buffer.from(sampleBatch(1));
  overrun.writeInt32BE(overrun.length, 8);
  assert.throws(() => validateBatch(new RecordBatchView(overrun)), isRecordsError('CORRUPT_MESSAGE'));
  assert.throws(() => new RecordBatchView(Buffer.alloc(60)), isRecordsError('CORRUPT_MESSAGE'));
});

test('property: a combined CRC32C equals the CRC of the concatenation', () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 3000 }), (a, b) => {
    const whole = crc32c(Buffer.concat([a, b]));
    assert.equal(crc32cCombine(crc32c(a), crc32c(b), b.length), whole);
    assert.equal(crc32cCombine(crc32c(a), crc32c(b), b.length, crc32cZerosOperator(b.length)), whole);
  }), { numRuns: 200 });
});

test('setProducer with the records CRC stamps the same bytes as a full recomputation', () => {
  const batch = buildRecordBatchSync({ records: Array.from({ length: 50 }, (_, i) => ({ key: null, value: Buffer.from(`value ${i} `.repeat(20)) })) });
  const slow = Buffer.from(batch);
  const fast = Buffer.from(batch);
  new RecordBatchView(slow).setProducer(4242, 3, 1000);
  new RecordBatchView(fast).setProducer(4242, 3, 1000, { crc: crc32c(batch.subarray(61)), zeros: crc32cZerosOperator(batch.length - 61) });
  assert.ok(fast.equals(slow));
  assert.ok(new RecordBatchView(fast).verifyCrc());
});

test('copyForProducer: another producer\'s stamp, offsets from 0, no leader epoch, the transactional bit set or cleared, a valid CRC, the records unchanged; the original untouched', async () => {
  const records = Array.from({ length: 20 }, (_, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`.repeat(50)), headers: [{ key: 'h', value: Buffer.from(String(i)) }], timestamp: 1_000 + i }));
  for (const compression of [Compression.None, Compression.Gzip]) {
    for (const isTransactional of [false, true]) {
      const original = await buildRecordBatch({ records, compression, baseOffset: 500, partitionLeaderEpoch: 7, producerId: 3, producerEpoch: 1, baseSequence: 40, isTransactional: !isTransactional });
      const before = Buffer.from(original);
      const view = new RecordBatchView(original);
      const copy = view.copyForProducer({ producerId: 99, producerEpoch: 4, baseSequence: 1234, isTransactional });
      assert.deepEqual(original, before, 'the original batch is not changed');
      assert.equal(copy.baseOffset, 0);
      assert.equal(copy.partitionLeaderEpoch, -1);
      assert.deepEqual([copy.producerId, copy.producerEpoch, copy.baseSequence, copy.isTransactional], [99, 4, 1234, isTransactional]);
      assert.equal(copy.compression, compression);
      assert.ok(copy.verifyCrc());
      validateBatch(copy);
      assert.deepEqual(copy.body(), view.body(), 'the records section keeps its bytes');
      const decoded = (await readRecords(copy)).map((r) => [r.offset, r.timestamp, r.key!.toString(), r.value!.toString(), r.headers[0]!.value!.toString()]);
      assert.deepEqual(decoded, records.map((r, i) => [i, r.timestamp, r.key.toString(), r.value.toString(), String(i)]));
    }
  }
});
