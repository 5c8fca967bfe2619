import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SlabLease, SlabPool } from '../../src/util/index.js';

test('a lease packs small pieces into one slab and takes another when a piece does not fit', () => {
  const pool = new SlabPool(1000, 4);
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
  assert.equal(lease.alloc(5000).length, 5000, 'a piece larger than a slab is its own buffer');
  assert.equal(lease.slabCount, 2);
});

test('released slabs are reused by the next lease, up to freeSlabsMax kept', () => {
  const pool = new SlabPool(100, 2);
  const first = new SlabLease(pool);
  const pieces = [first.alloc(100), first.alloc(100), first.alloc(100)];
  assert.equal(pool.slabsAllocated, 3);
  first.release();
  first.release(); // twice is harmless
  assert.equal(pool.freeSlabs, 2, 'the third slab is left to the GC');
  const second = new SlabLease(pool);
  const again = second.alloc(100);
  assert.ok(pieces.some((p) => p.buffer === again.buffer), 'a slab of the first lease is reused');
  assert.equal(pool.slabsAllocated, 3);
  assert.throws(() => first.alloc(1), /released/);
});
