// Legacy message sets (magic 0/1) and their up-conversion to RecordBatch v2: frames captured from
// kcat and kafka-python (test/fixtures/capture-legacy.ts), then sets built here for what those
// clients cannot send (magic 1 with snappy/lz4, broken input, Kafka's refusal rules).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { decodeRequest } from '../../src/protocol/index.js';
import {
  Compression, RecordBatchView, RecordsError, convertLegacyMessageSet, crc32, decompress, isLegacyMessageSet,
  iterateBatches, readLegacyMessageSet, readRecords, validateBatch,
} from '../../src/records/index.js';
import { xxh32Short } from '../../src/records/legacy.js';
import { LEGACY_FIXTURE_RECORDS, LEGACY_FIXTURE_TIMESTAMP } from '../fixtures/legacy-records.js';
import { legacyMessage, legacyWrapper } from '../fixtures/legacy-encoder.js';

const FRAMES = join(process.cwd(), 'test', 'fixtures', 'frames');

/** The records of partition 0 in a captured Produce frame. */
function producedRecords(name: string): Buffer {
  return (decodeRequest(readFileSync(join(FRAMES, name))).body as any).topicData[0].partitionData[0].records;
}

const FIXTURES = [
  { name: 'legacy-kcat0.8.2-none-Produce-v0.bin', magic: 0, codec: Compression.None },
  { name: 'legacy-kcat0.9.0-none-Produce-v1.bin', magic: 0, codec: Compression.None },
  { name: 'legacy-kcat0.9.0-gzip-Produce-v1.bin', magic: 0, codec: Compression.Gzip },
  { name: 'legacy-kcat0.9.0-snappy-Produce-v1.bin', magic: 0, codec: Compression.Snappy },
  { name: 'legacy-kcat0.9.0-lz4-Produce-v1.bin', magic: 0, codec: Compression.Lz4 },
  { name: 'legacy-kafkapython0.9-none-Produce-v1.bin', magic: 0, codec: Compression.None },
  { name: 'legacy-kafkapython0.9-gzip-Produce-v1.bin', magic: 0, codec: Compression.Gzip },
  { name: 'legacy-kafkapython0.10-none-Produce-v2.bin', magic: 1, codec: Compression.None },
  { name: 'legacy-kafkapython0.10-gzip-Produce-v2.bin', magic: 1, codec: Compression.Gzip },
];

const str = (b: Buffer | null | undefined) => (b == null ? null : b.toString());

async function expectCode(p: Promise<unknown>, code: string, what: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => e instanceof RecordsError && e.code === code, what);
}

const message = legacyMessage;
const wrapper = legacyWrapper;

// --------------------------------------------------------------------------------- fixtures

test('captured kcat and kafka-python legacy sets convert to one v2 batch with every key, value and timestamp', async () => {
  for (const f of FIXTURES) {
    const legacy = producedRecords(f.name);
    assert.ok(isLegacyMessageSet(legacy), f.name);
    assert.equal(legacy[16], f.magic, `${f.name}: magic`);
    const set = await readLegacyMessageSet(legacy);
    assert.equal(set.magic, f.magic, f.name);
    assert.equal(set.compression, f.codec, `${f.name}: codec`);
    const batch = await convertLegacyMessageSet(legacy);
    const views = [...iterateBatches(batch)];
    assert.equal(views.length, 1, `${f.name}: one batch`);
    const view = views[0]!;
    validateBatch(view, { fromClient: true });
    assert.equal(view.compression, f.codec, `${f.name}: the converted batch keeps the codec`);
    assert.equal(view.producerId, -1);
    const records = await readRecords(view);
    assert.deepEqual(records.map((r) => ({ key: str(r.key), value: str(r.value) })), LEGACY_FIXTURE_RECORDS, f.name);
    assert.deepEqual(records.map((r) => r.offset), [0, 1, 2, 3], `${f.name}: offsets`);
    const timestamps = LEGACY_FIXTURE_RECORDS.map((_, i) => (f.magic === 0 ? -1 : LEGACY_FIXTURE_TIMESTAMP + i));
    assert.deepEqual(records.map((r) => r.timestamp), timestamps, `${f.name}: magic ${f.magic} timestamps`);
    assert.equal(view.maxTimestamp, f.magic === 0 ? -1 : LEGACY_FIXTURE_TIMESTAMP + 3);
  }
});

test('kcat magic-0 lz4 carries the KAFKA-3160 frame checksum lz4 rejects, and converts anyway', async () => {
  const legacy = producedRecords('legacy-kcat0.9.0-lz4-Produce-v1.bin');
  // magic 0, null key: the value's length is at 22 and the compressed inner set follows.
  assert.equal(legacy.readInt32BE(18), -1);
  const value = legacy.subarray(26, 26 + legacy.readInt32BE(22));
  await expectCode(decompress(Compression.Lz4, value), 'CORRUPT_MESSAGE', 'the raw wrapper value fails the header checksum');
  assert.equal((await readLegacyMessageSet(legacy)).records.length, 4);
});

/** Where each top-level entry of a legacy set starts (walking the size fields), and its end. */
function entryStarts(legacy: Buffer): number[] {
  const starts: number[] = [];
  for (let at = 0; at < legacy.length; at += 12 + legacy.readInt32BE(at + 8)) starts.push(at);
  return [...starts, legacy.length];
}

test('every truncation of a captured set inside a message is CORRUPT_MESSAGE; at a message boundary it is the shorter set', async () => {
  for (const f of FIXTURES) {
    const legacy = producedRecords(f.name);
    const starts = entryStarts(legacy);
    for (let n = 1; n < legacy.length; n++) {
      const cut = readLegacyMessageSet(legacy.subarray(0, n));
      if (starts.includes(n)) assert.equal((await cut).records.length, starts.indexOf(n), `${f.name} cut at ${n}`);
      else await expectCode(cut, 'CORRUPT_MESSAGE', `${f.name} cut at ${n}`);
    }
  }
});

test('a flipped byte anywhere past an entry\'s offset field is refused with a records error code (CRC, lengths, magic)', async () => {
  for (const f of FIXTURES) {
    const legacy = producedRecords(f.name);
    const starts = entryStarts(legacy);
    for (let i = 0; i < legacy.length; i++) {
      // The offset (first 8 bytes of each entry) is the client's to choose and the broker's to replace.
      if (starts.some((s) => i >= s && i < s + 8)) continue;
      const bad = Buffer.from(legacy);
      bad[i]! ^= 0x41;
      await assert.rejects(readLegacyMessageSet(bad), (e: unknown) => e instanceof RecordsError, `${f.name}: byte ${i}`);
    }
  }
});

// ------------------------------------------------------------------------------ built sets

test('CRC-32 (IEEE) and xxHash32 match their published check values', () => {
  assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
  assert.equal(xxh32Short(Buffer.alloc(0)), 0x02cc5d05);
  assert.equal(xxh32Short(Buffer.from('a')), 0x550d7456);
  assert.equal(xxh32Short(Buffer.from('abc')), 0x32d153ff);
});

const recordArb = fc.record({
  key: fc.option(fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)), { nil: null }),
  value: fc.option(fc.uint8Array({ maxLength: 60 }).map((a) => Buffer.from(a)), { nil: null }),
  timestamp: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 2 ** 45 })),
});

test('property: any magic 0/1 set, plain or in a gzip/snappy/lz4 wrapper, converts to the same records', async () => {
  await fc.assert(fc.asyncProperty(
    fc.constantFrom<0 | 1>(0, 1), fc.constantFrom(Compression.None, Compression.Gzip, Compression.Snappy, Compression.Lz4),
    fc.array(recordArb, { minLength: 1, maxLength: 20 }),
    async (magic, codec, recs) => {
      const msgs = recs.map((r, i) => message({ magic, key: r.key, value: r.value, timestamp: r.timestamp, offset: codec === Compression.None ? 1000 + i : i }));
      const legacy = codec === Compression.None ? Buffer.concat(msgs) : await wrapper(magic, codec, msgs);
      const view = new RecordBatchView(await convertLegacyMessageSet(legacy));
      validateBatch(view, { fromClient: true });
      assert.equal(view.compression, codec);
      const out = await readRecords(view);
      assert.deepEqual(out.map((r) => [r.key, r.value, r.timestamp]), recs.map((r) => [r.key, r.value, magic === 0 ? -1 : r.timestamp]));
    },
  ), { numRuns: 60 });
});

test('property: mutated legacy sets give a records error or a valid batch, never another exception', async () => {
  const base = await Promise.all(FIXTURES.map((f) => producedRecords(f.name)));
  await fc.assert(fc.asyncProperty(
    fc.nat(base.length - 1), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }),
    async (which, flips) => {
      const bad = Buffer.from(base[which]!);
      for (const [at, x] of flips) bad[at % bad.length]! ^= x;
      try {
        validateBatch(new RecordBatchView(await convertLegacyMessageSet(bad)), { fromClient: true });
      } catch (e) {
        assert.ok(e instanceof RecordsError, String(e));
      }
    },
  ), { numRuns: 300 });
});

test('a message whose stored CRC is wrong is CORRUPT_MESSAGE, plain or inside a wrapper', async () => {
  const good = message({ magic: 1, timestamp: 5, key: Buffer.from('k'), value: Buffer.from('v') });
  const bad = Buffer.from(good);
  bad.writeUInt32BE(bad.readUInt32BE(12) ^ 1, 12);
  await expectCode(readLegacyMessageSet(Buffer.concat([good, bad])), 'CORRUPT_MESSAGE', 'plain');
  // The wrapper's own CRC is right; the inner message's is not.
  await expectCode(readLegacyMessageSet(await wrapper(1, Compression.Gzip, [good, bad])), 'CORRUPT_MESSAGE', 'inner');
});

test('Kafka refusal rules: mixed magic, a wrapper with company, nested or mismatched inner messages, null or empty wrappers', async () => {
  const m0 = message({ magic: 0, key: null, value: Buffer.from('a') });
  const m1 = message({ magic: 1, timestamp: 7, key: null, value: Buffer.from('b') });
  await expectCode(readLegacyMessageSet(Buffer.concat([m0, m1])), 'INVALID_RECORD', 'magic 0 then 1');
  const gz = await wrapper(1, Compression.Gzip, [m1]);
  await expectCode(readLegacyMessageSet(Buffer.concat([gz, m1])), 'INVALID_RECORD', 'a wrapper and a plain message');
  await expectCode(readLegacyMessageSet(Buffer.concat([gz, gz])), 'INVALID_RECORD', 'two wrappers');
  await expectCode(readLegacyMessageSet(await wrapper(1, Compression.Gzip, [gz])), 'INVALID_RECORD', 'a wrapper inside a wrapper');
  await expectCode(readLegacyMessageSet(await wrapper(1, Compression.Gzip, [m0])), 'INVALID_RECORD', 'magic 0 inside magic 1');
  await expectCode(readLegacyMessageSet(message({ magic: 1, attributes: Compression.Gzip, timestamp: 1, key: null, value: null })), 'INVALID_RECORD', 'null wrapper value');
  await expectCode(readLegacyMessageSet(await wrapper(0, Compression.Gzip, [])), 'INVALID_RECORD', 'empty wrapper');
  await expectCode(readLegacyMessageSet(message({ magic: 1, attributes: Compression.Zstd, timestamp: 1, key: null, value: Buffer.from('x') })), 'UNSUPPORTED_COMPRESSION_TYPE', 'zstd needs magic 2');
  await expectCode(readLegacyMessageSet(message({ magic: 1, timestamp: 2 ** 52, key: null, value: null })), 'INVALID_RECORD', 'a timestamp the v2 builder cannot write');
  const v2 = producedRecords('kcat-none-Produce-v7.bin');
  await expectCode(readLegacyMessageSet(Buffer.concat([m0, v2])), 'INVALID_RECORD', 'a v2 batch after a legacy message');
  await expectCode(readLegacyMessageSet(Buffer.alloc(0)), 'INVALID_RECORD', 'nothing');
  const tail = Buffer.concat([m0, Buffer.alloc(3)]);
  await expectCode(readLegacyMessageSet(tail), 'CORRUPT_MESSAGE', 'trailing bytes');
});

test('inner messages of a magic-1 LogAppendTime wrapper take the wrapper timestamp; plain ones keep their own', async () => {
  const inner = [1, 2, 3].map((t) => message({ magic: 1, timestamp: t, key: null, value: Buffer.from(`v${t}`) }));
  const lat = await readLegacyMessageSet(await wrapper(1, Compression.Snappy, inner, { timestamp: 99, attributes: 0x08 }));
  assert.deepEqual(lat.records.map((r) => r.timestamp), [99, 99, 99]);
  const create = await readLegacyMessageSet(await wrapper(1, Compression.Lz4, inner, { timestamp: 99 }));
  assert.deepEqual(create.records.map((r) => r.timestamp), [1, 2, 3]);
  const plain = await readLegacyMessageSet(message({ magic: 1, attributes: 0x08, timestamp: 42, key: null, value: null }));
  assert.deepEqual(plain.records.map((r) => r.timestamp), [42]);
});

test('a magic-0 lz4 wrapper with a correct frame checksum converts too (the fix leaves it alone)', async () => {
  const inner = [message({ magic: 0, key: Buffer.from('k'), value: Buffer.from('v') })];
  const set = await readLegacyMessageSet(await wrapper(0, Compression.Lz4, inner));
  assert.deepEqual(set.records.map((r) => [str(r.key), str(r.value), r.timestamp]), [['k', 'v', -1]]);
});

test('RecordBatch v2 bytes are not a legacy set', () => {
  assert.equal(isLegacyMessageSet(producedRecords('kcat-gzip-Produce-v7.bin')), false);
  assert.equal(isLegacyMessageSet(Buffer.alloc(10)), false);
});
