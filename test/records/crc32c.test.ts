// Every CRC32C implementation that loads here (our SSE4.2 addon, @node-rs/crc32, pure JS) agrees
// with the table-driven reference on every length, alignment and initial value, in particular
// around the addon's block boundaries, where its three chains are joined.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { crc32cImplementation, crc32cImplementations, crc32cJs } from '../../src/records/crc32c.js';

// The addon runs three chains over 3 x 4096 and 3 x 256 byte blocks; lengths at and next to those
// multiples (and the 8-byte word) are where an off-by-one would hide.
const BOUNDARIES = [0, 1, 7, 8, 9, 767, 768, 769, 775, 1536, 12287, 12288, 12289, 13056, 24576, 24583];

function bytes(seed: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed | 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

test('each CRC32C implementation gives the check value and the reference CRC at every block boundary', () => {
  const implementations = crc32cImplementations();
  for (const { name, crc32c } of implementations) {
    assert.equal(crc32c(Buffer.from('123456789'), 0) >>> 0, 0xe3069283, name);
    for (const length of BOUNDARIES) {
      for (const offset of [0, 1, 3, 7]) {
        const data = bytes(length * 31 + offset, length + offset).subarray(offset);
        assert.equal(crc32c(data, 0) >>> 0, crc32cJs(data), `${name} length ${length} offset ${offset}`);
        assert.equal(crc32c(data, 0xdeadbeef) >>> 0, crc32cJs(data, 0xdeadbeef), `${name} length ${length} offset ${offset} continued`);
      }
    }
  }
});

test('property: every implementation equals the reference on random bytes, offsets and initial values', () => {
  const implementations = crc32cImplementations();
  fc.assert(fc.property(fc.integer({ min: 0, max: 60_000 }), fc.integer({ min: 0, max: 15 }), fc.integer(), fc.nat(), (length, offset, seed, initial) => {
    const data = bytes(seed, length + offset).subarray(offset);
    const expected = crc32cJs(data, initial >>> 0);
    for (const { name, crc32c } of implementations) assert.equal(crc32c(data, initial >>> 0) >>> 0, expected, name);
  }), { numRuns: 300 });
});

test('a non-Uint8Array argument to the addon is a TypeError, not a crash', (t) => {
  const addon = crc32cImplementations().find((i) => i.name === 'sse4.2');
  if (addon === undefined) return t.skip('the addon is not built on this machine');
  assert.throws(() => addon.crc32c('text' as unknown as Uint8Array), TypeError);
  assert.throws(() => addon.crc32c(new Uint16Array(4) as unknown as Uint8Array), TypeError);
});

test('on x86-64 the SSE4.2 addon is built by the install and used', (t) => {
  if (process.arch !== 'x64' || process.platform === 'win32') return t.skip(`no addon on ${process.platform}/${process.arch}`);
  if (process.env.LOGLINE_CRC32C) return t.skip(`LOGLINE_CRC32C=${process.env.LOGLINE_CRC32C} chooses the implementation`);
  // scripts/build-native.mjs runs at npm ci and before the tests; a missing compiler only warns,
  // and then this fails so the slower fallback is not taken silently.
  assert.equal(crc32cImplementation, 'sse4.2');
});
