// Reusable memory for bytes that live exactly as long as one response. A fetch reads its record
// batches into slabs leased from a pool, and the network layer hands the slabs back once the
// response has been written to the socket. Fresh buffers for every read cost more than the read:
// at 1 GB/s a page fault and a kernel page clear per 4 KiB of a new allocation, and a V8
// mark-compact per ~64 MiB of new external memory (bench/README.md, "Where the time goes").
import { assert } from './assert.js';

/**
 * Slabs in size classes of `slabBytes` times a power of two, up to `slabBytesMax`. Given-back slabs
 * are kept for reuse up to `freeBytesMax` in all (making room by dropping free slabs of other
 * classes), the rest left to the GC; `trimIfIdle` drops the kept ones when none was taken since its
 * last call (memory is not held after a burst).
 */
export class SlabPool {
  /** Free slabs per class: index k holds slabs of slabBytes * 2^k. */
  private readonly free: Buffer[][] = [];
  private freeBytesNow = 0;
  private takenSinceTrim = 0;
  /** Slabs allocated because none was free (for tests and metrics). */
  slabsAllocated = 0;

  constructor(readonly slabBytes: number, readonly slabBytesMax: number, readonly freeBytesMax: number) {
    assert(Number.isInteger(slabBytes) && slabBytes > 0 && slabBytesMax >= slabBytes, `slab sizes ${slabBytes}..${slabBytesMax}`);
    for (let size = slabBytes; size <= slabBytesMax; size *= 2) this.free.push([]);
  }

  /** A slab of at least `bytes` (at most slabBytesMax), or null when `bytes` is larger than any. */
  take(bytes = this.slabBytes): Buffer | null {
    const k = this.classOf(bytes);
    if (k < 0) return null;
    this.takenSinceTrim++;
    const slab = this.free[k]!.pop();
    if (slab) {
      this.freeBytesNow -= slab.length;
      return slab;
    }
    this.slabsAllocated++;
    return Buffer.allocUnsafeSlow(this.slabBytes * 2 ** k);
  }

  give(slab: Buffer): void {
    const k = this.classOf(slab.length);
    assert(k >= 0 && slab.length === this.slabBytes * 2 ** k, 'a slab of another pool');
    if (slab.length > this.freeBytesMax) return;
    // Over the budget, free slabs of other classes go first: the class given back is the one in use
    // (a workload that moved from 1 MiB to 4 MiB reads must not find the budget full of 1 MiB slabs).
    for (let j = this.free.length - 1; j >= 0 && this.freeBytesNow + slab.length > this.freeBytesMax; j--) {
      if (j === k) continue;
      while (this.free[j]!.length > 0 && this.freeBytesNow + slab.length > this.freeBytesMax) this.freeBytesNow -= this.free[j]!.pop()!.length;
    }
    if (this.freeBytesNow + slab.length > this.freeBytesMax) return;
    this.free[k]!.push(slab);
    this.freeBytesNow += slab.length;
  }

  /** Drops every free slab when none was taken since the last call; returns the bytes dropped. */
  trimIfIdle(): number {
    const idle = this.takenSinceTrim === 0;
    this.takenSinceTrim = 0;
    if (!idle) return 0;
    const dropped = this.freeBytesNow;
    for (const list of this.free) list.length = 0;
    this.freeBytesNow = 0;
    return dropped;
  }

  get freeBytes(): number { return this.freeBytesNow; }

  private classOf(bytes: number): number {
    let k = 0;
    for (let size = this.slabBytes; size < bytes; size *= 2) k++;
    return k < this.free.length ? k : -1;
  }
}

/**
 * Bump allocation from pooled slabs for one response. `alloc` hands out pieces of the current slab
 * and takes a new one (of the piece's size class) when a piece does not fit; a piece larger than
 * the largest slab is a plain allocation. After `release()` every piece may be overwritten by
 * another response: the caller must release only once nothing reads the pieces any more (the
 * socket has taken the bytes).
 */
export class SlabLease {
  private readonly slabs: Buffer[] = [];
  private current: Buffer | null = null;
  private used = 0;
  private released = false;

  constructor(private readonly pool: SlabPool) {}

  alloc(bytes: number): Buffer {
    assert(!this.released, 'alloc from a released lease');
    if (this.current === null || this.used + bytes > this.current.length) {
      const slab = this.pool.take(bytes);
      if (slab === null) return Buffer.allocUnsafe(bytes);
      this.current = slab;
      this.slabs.push(slab);
      this.used = 0;
    }
    const piece = this.current.subarray(this.used, this.used + bytes);
    this.used += bytes;
    return piece;
  }

  /** Gives every slab back to the pool; later calls do nothing. */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const slab of this.slabs) this.pool.give(slab);
    this.slabs.length = 0;
    this.current = null;
  }

  get slabCount(): number { return this.slabs.length; }
}
