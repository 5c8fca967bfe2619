// Reusable memory for bytes that live exactly as long as one response. A fetch reads its record
// batches into slabs leased from a pool, and the network layer hands the slabs back once the
// response has been written to the socket. Fresh buffers for every read cost more than the read:
// at 1 GB/s a page fault and a kernel page clear per 4 KiB of a new allocation, and a V8
// mark-compact per ~64 MiB of new external memory (bench/README.md, "Where the time goes").
import { assert } from './assert.js';

/** Equal-size slabs; up to `freeSlabsMax` given-back slabs are kept for reuse, the rest left to GC. */
export class SlabPool {
  private readonly free: Buffer[] = [];
  /** Slabs allocated because none was free (for tests and metrics). */
  slabsAllocated = 0;

  constructor(readonly slabBytes: number, readonly freeSlabsMax: number) {
    assert(Number.isInteger(slabBytes) && slabBytes > 0, `slab size ${slabBytes}`);
  }

  take(): Buffer {
    const slab = this.free.pop();
    if (slab) return slab;
    this.slabsAllocated++;
    return Buffer.allocUnsafeSlow(this.slabBytes);
  }

  give(slab: Buffer): void {
    assert(slab.length === this.slabBytes, 'a slab of another pool');
    if (this.free.length < this.freeSlabsMax) this.free.push(slab);
  }

  get freeSlabs(): number { return this.free.length; }
}

/**
 * Bump allocation from pooled slabs for one response. `alloc` hands out pieces of the current slab
 * and takes a new one when a piece does not fit; a piece larger than a slab is a plain allocation.
 * After `release()` every piece may be overwritten by another response: the caller must release
 * only once nothing reads the pieces any more (the socket has taken the bytes).
 */
export class SlabLease {
  private readonly slabs: Buffer[] = [];
  private current: Buffer | null = null;
  private used = 0;
  private released = false;

  constructor(private readonly pool: SlabPool) {}

  alloc(bytes: number): Buffer {
    assert(!this.released, 'alloc from a released lease');
    if (bytes > this.pool.slabBytes) return Buffer.allocUnsafe(bytes);
    if (this.current === null || this.used + bytes > this.current.length) {
      this.current = this.pool.take();
      this.slabs.push(this.current);
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
