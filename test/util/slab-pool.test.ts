import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SlabLease, SlabPool } from '../../src/util/index.js';

test('a lease packs small pieces into one slab and takes another when a piece does not fit', () => {
  const pool = new SlabPool(1000, 4000, 10_000);
  const lease = new SlabLease(pool);
  const a = lease.alloc(400);
  const b = lease.alloc(500);
  assert.equal(lease.slabCount, 1);
  assert.equal(a.buffer, b.buffer, 'both pieces in the same slab');
  a.fill(1);
  b.fill(2);
  assert.ok(a.every((x) => x === 1), 'pieces do not overlap');
  const c = lease.alloc(200);
  assert.equal(lease.slabCount, 2);
  assert.notEqual(c.buffer, a.buffer);
  const d = lease.alloc(2500);
  assert.equal(lease.slabCount, 3, 'a piece above the slab size takes a slab of its size class');
  assert.equal(d.buffer.byteLength, 4000);
  assert.equal(lease.alloc(5000).length, 5000, 'a piece above the largest class is its own buffer');
  assert.equal(lease.slabCount, 3);
});

test('released slabs are reused by the next lease, up to freeBytesMax kept', () => {
  const pool = new SlabPool(100, 100, 200);
  const first = new SlabLease(pool);
  const pieces = [first.alloc(100), first.alloc(100), first.alloc(100)];
  assert.equal(pool.slabsAllocated, 3);
  first.release();
  first.release(); // twice is harmless
  assert.equal(pool.freeBytes, 200, 'the third slab is left to the GC');
  const second = new SlabLease(pool);
  const again = second.alloc(100);
  assert.ok(pieces.some((p) => p.buffer === again.buffer), 'a slab of the first lease is reused');
  assert.equal(pool.slabsAllocated, 3);
  assert.throws(() => first.alloc(1), /released/);
});

test('free slabs are dropped only after a whole interval in which none was taken', () => {
  const pool = new SlabPool(100, 400, 10_000);
  const lease = new SlabLease(pool);
  lease.alloc(100);
  lease.alloc(300);
  lease.release();
  assert.equal(pool.freeBytes, 500);
  assert.equal(pool.trimIfIdle(), 0, 'slabs were taken in this interval');
  assert.equal(pool.trimIfIdle(), 500, 'none taken since: dropped');
  assert.equal(pool.freeBytes, 0);
  new SlabLease(pool).alloc(10);
  assert.equal(pool.slabsAllocated, 3);
});

test('over the budget, a given-back slab displaces free slabs of other classes', () => {
  const pool = new SlabPool(100, 400, 400);
  const small = new SlabLease(pool);
  for (let i = 0; i < 4; i++) small.alloc(100);
  small.release();
  assert.equal(pool.freeBytes, 400);
  const large = new SlabLease(pool);
  large.alloc(400);
  large.release();
  assert.equal(pool.freeBytes, 400, 'the 400-byte slab is kept in place of the small ones');
  const before = pool.slabsAllocated;
  new SlabLease(pool).alloc(400);
  assert.equal(pool.slabsAllocated, before, 'and reused');
});
