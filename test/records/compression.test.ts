// Codecs against data compressed by independent implementations (GNU gzip, Python's gzip, the lz4
// and zstd CLIs, hand-assembled snappy), round trips, and bounded inflation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import {
  Compression, RecordBatchView, RecordsError, compress, decompress, readRecords,
} from '../../src/records/index.js';
import { _setCodecPackageForTest, isXerial, lz4FrameBound, zstdBound } from '../../src/records/compression.js';
import { decodeFixtureBatches, recordsFixtureDir } from './records-fixtures.js';

const fixture = (name: string) => join(recordsFixtureDir, name);
const isCode = (code: string) => (e: unknown) => e instanceof RecordsError && e.code === code;

const vectors: [string, Compression][] = [
  ['gz', Compression.Gzip], ['py.gz', Compression.Gzip], ['lz4', Compression.Lz4], ['b4.lz4', Compression.Lz4],
  ['zst', Compression.Zstd], ['nocheck.zst', Compression.Zstd],
];

for (const [suffix, codec] of vectors) {
  test(`decompresses text.txt.${suffix}, written by an independent ${Compression[codec]} implementation`, async (t) => {
    if (!existsSync(fixture(`text.txt.${suffix}`))) {
      t.skip(`fixture text.txt.${suffix} is missing (its tool was not installed when make-fixtures.sh ran)`);
      return;
    }
    const out = await decompress(codec, readFileSync(fixture(`text.txt.${suffix}`)));
    assert.ok(out.equals(readFileSync(fixture('text.txt'))));
  });

  test(`reads a batch whose body was compressed by an independent ${Compression[codec]} (${suffix})`, async (t) => {
    if (!existsSync(fixture(`body.bin.${suffix}`))) {
      t.skip(`fixture body.bin.${suffix} is missing`);
      return;
    }
    const plain = readFileSync(fixture('body-batch.bin'));
    const batch = Buffer.concat([plain.subarray(0, 61), readFileSync(fixture(`body.bin.${suffix}`))]);
    batch.writeInt32BE(batch.length - 12, 8);
    batch.writeInt16BE(codec, 21);
    new RecordBatchView(batch).updateCrc();
    const [expected] = await decodeFixtureBatches(plain);
    const [got] = await decodeFixtureBatches(batch);
    assert.deepEqual(got!.records, expected!.records);
    assert.equal(got!.records.length, 10);
    assert.deepEqual(got!.records[4]!.headers.map((h) => [h.key, h.value?.toString() ?? null]), [['trace', 't-4'], ['empty', null]]);
  });
}

// Assembled by hand from the snappy format description: a varint length, then tagged elements.
// "abcd" as a 4-byte literal (tag 0x0c), then a 12-byte copy at offset 4 with a 2-byte offset (0x2e).
const RAW_SNAPPY_ABCD = Buffer.from('100c616263642e0400', 'hex');
const RAW_SNAPPY_XYZ = Buffer.from('030878797a', 'hex');

function xerial(...blocks: Buffer[]): Buffer {
  const parts: Buffer[] = [Buffer.from("82534e4150505900", "hex"), Buffer.from("0000000100000001", "hex")];
  for (const b of blocks) {
    const len = Buffer.alloc(4);
    len.writeInt32BE(b.length);
    parts.push(len, b);
  }
  return Buffer.concat(parts);
}

test('snappy reads raw blocks and xerial-framed streams assembled by hand', async () => {
  assert.equal((await decompress(Compression.Snappy, RAW_SNAPPY_ABCD)).toString(), 'abcdabcdabcdabcd');
  const framed = xerial(RAW_SNAPPY_ABCD, RAW_SNAPPY_XYZ);
  assert.ok(isXerial(framed));
  assert.equal((await decompress(Compression.Snappy, framed)).toString(), 'abcdabcdabcdabcdxyz');
  assert.equal((await decompress(Compression.Snappy, xerial())).length, 0);
});

test('snappy writes xerial framing, in 32 KiB blocks', async () => {
  const data = readFileSync(fixture('text.txt'));
  const out = await compress(Compression.Snappy, data);
  assert.ok(isXerial(out));
  assert.equal(out.readInt32BE(8), 1);
  assert.ok((await decompress(Compression.Snappy, out)).equals(data));
});

test('every codec round-trips empty, small and 1 MiB inputs', async () => {
  const text = readFileSync(fixture('text.txt'));
  const big = Buffer.concat(Array.from({ length: 29 }, () => text)).subarray(0, 1 << 20);
  for (const codec of [Compression.None, Compression.Gzip, Compression.Snappy, Compression.Lz4, Compression.Zstd]) {
    for (const data of [Buffer.alloc(0), Buffer.from('x'), big]) {
      const packed = await compress(codec, data);
      assert.ok((await decompress(codec, packed)).equals(data), `${Compression[codec]} ${data.length}`);
    }
  }
});

test('inflation is bounded: a small input claiming a huge output is refused before allocating', async () => {
  const zeros = Buffer.alloc(4 << 20);
  for (const codec of [Compression.Gzip, Compression.Snappy, Compression.Lz4, Compression.Zstd]) {
    const packed = await compress(codec, zeros);
    await assert.rejects(decompress(codec, packed, 1 << 20), isCode('CORRUPT_MESSAGE'), Compression[codec]);
    assert.equal((await decompress(codec, packed, 4 << 20)).length, 4 << 20);
  }
  // A raw snappy block claiming 2^32-1 bytes.
  await assert.rejects(decompress(Compression.Snappy, Buffer.from('ffffffff0f00', 'hex')), isCode('CORRUPT_MESSAGE'));
  assert.ok(lz4FrameBound(await compress(Compression.Lz4, zeros)) >= zeros.length);
  assert.ok(zstdBound(await compress(Compression.Zstd, zeros)) >= zeros.length);
});

test('garbage and truncated compressed data give CORRUPT_MESSAGE, never another error', async () => {
  const text = readFileSync(fixture('text.txt'));
  for (const codec of [Compression.Gzip, Compression.Snappy, Compression.Lz4, Compression.Zstd]) {
    const packed = await compress(codec, text);
    for (const bad of [Buffer.from('not compressed at all'), packed.subarray(0, packed.length >> 1), packed.subarray(0, 3), Buffer.alloc(0)]) {
      try {
        const out = await decompress(codec, bad);
        // Some truncations are still valid streams (e.g. an empty xerial stream); never longer output.
        assert.ok(out.length <= text.length);
      } catch (e) {
        assert.ok(e instanceof RecordsError && e.code === 'CORRUPT_MESSAGE', `${Compression[codec]}: ${String(e)}`);
      }
    }
  }
  await assert.rejects(decompress(Compression.Gzip, gzipSync(text).subarray(0, 100)), isCode('CORRUPT_MESSAGE'));
});

test('a codec whose native package fails to load gives UNSUPPORTED_COMPRESSION_TYPE', async () => {
  _setCodecPackageForTest('lz4-napi', true);
  try {
    await assert.rejects(compress(Compression.Lz4, Buffer.from('x')), (e: unknown) =>
      e instanceof RecordsError && e.code === 'UNSUPPORTED_COMPRESSION_TYPE' && /lz4-napi/.test(e.message));
  } finally {
    _setCodecPackageForTest('lz4-napi', false);
  }
  assert.equal((await decompress(Compression.Lz4, await compress(Compression.Lz4, Buffer.from('back')))).toString(), 'back');
  await assert.rejects(decompress(7 as Compression, Buffer.from('x')), isCode('UNSUPPORTED_COMPRESSION_TYPE'));
});

test('readRecords on a batch with an unknown codec gives UNSUPPORTED_COMPRESSION_TYPE', async () => {
  const batch = Buffer.from(readFileSync(fixture('body-batch.bin')));
  batch.writeInt16BE(5, 21);
  await assert.rejects(readRecords(new RecordBatchView(batch)), isCode('UNSUPPORTED_COMPRESSION_TYPE'));
});
