import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BufferPool } from '../../src/util/index.js';

const pool = (pooledBytesMax = 1 << 20, poison = false) => new BufferPool({ classBytesMin: 4096, classBytesMax: 65536, pooledBytesMax, poison });

test('a released buffer is reused for the next request of its size class, and a steady load allocates nothing', () => {
  const p = pool();
  const a = p.allocate(5000);
  assert.equal(a.length, 5000);
  assert.equal(a.buffer.byteLength, 8192, 'rounded up to its power-of-two class');
  p.release(a);
  const b = p.allocate(8000);
  assert.equal(b.buffer, a.buffer, 'same backing store');
  for (let i = 0; i < 1000; i++) p.release(p.allocate(4097 + (i % 4000)));
  assert.equal(p.stats.allocated, 2, 'b is still out; one more buffer serves the loop');
});

test('sizes outside the classes are plain allocations and never pooled', () => {
  const p = pool();
  const small = p.allocate(100);
  const big = p.allocate(100_000);
  p.release(small);
  p.release(big);
  assert.equal(p.stats.released, 0);
  assert.equal(p.stats.allocated, 0);
});

test('release ignores foreign buffers, slices, and a second release of the same buffer', () => {
  const p = pool();
  const a = p.allocate(10_000);
  p.release(Buffer.alloc(10_000));
  p.release(a.subarray(10));
  p.release(a);
  p.release(a);
  assert.equal(p.stats.released, 1);
  const x = p.allocate(10_000);
  const y = p.allocate(10_000);
  assert.notEqual(x.buffer, y.buffer, 'a double release would hand one store out twice');
});

test('the pool keeps at most pooledBytesMax; the rest is left to the GC', () => {
  const p = pool(3 * 16384);
  const held = Array.from({ length: 5 }, () => p.allocate(16384));
  for (const b of held) p.release(b);
  assert.equal(p.stats.pooledBytes, 3 * 16384);
  assert.equal(p.stats.dropped, 2);
});

test('poison fills a released buffer so a use after release shows up as corrupt bytes', () => {
  const p = pool(1 << 20, true);
  const a = p.allocate(6000).fill(1);
  p.release(a);
  assert.ok(a.every((byte) => byte === 0xee));
});
