// A pool of byte buffers in power-of-two size classes, for memory that is handed back explicitly.
//
// Why: every Buffer above Node's 4 KiB pool threshold has its own backing store, which V8 counts
// as external memory; allocating ~64 MB of them since the last full GC makes V8 run a
// mark-compact. A broker taking produce requests at 50 MB/s did several a second (4-15 ms pauses,
// the produce latency tail); at 600 MB/s, ten a second. Buffers that go back to the pool are
// reused instead, so a steady load allocates nothing.
//
// The contract: `release(buf)` only when nothing can read `buf` any more. A buffer released too
// early is overwritten by the next request, so callers release only where the lifetime is plain
// (a produce frame once its records are in the log file). `poison` fills released buffers so a
// test makes a premature release visible as corrupt data instead of a silent, rare race.
import { assert } from './assert.js';

export interface BufferPoolOptions {
  /** Smallest class; smaller requests are served by Buffer.allocUnsafe (Node's own slab). */
  classBytesMin: number;
  /** Largest class; larger requests are allocated and never pooled. */
  classBytesMax: number;
  /** Bytes kept in free lists across all classes; releases beyond it are left to the GC. */
  pooledBytesMax: number;
  /** Fill released buffers with 0xEE (tests). */
  poison?: boolean;
}

export interface BufferPoolStats {
  allocated: number;
  reused: number;
  released: number;
  dropped: number;
  pooledBytes: number;
}

export class BufferPool {
  private readonly free: ArrayBuffer[][] = [];
  /** Backing stores handed out and not yet released: release() accepts only these, once. */
  private readonly issued = new WeakSet<ArrayBuffer>();
  readonly stats: BufferPoolStats = { allocated: 0, reused: 0, released: 0, dropped: 0, pooledBytes: 0 };

  constructor(readonly options: BufferPoolOptions) {
    assert(isPowerOfTwo(options.classBytesMin) && isPowerOfTwo(options.classBytesMax) && options.classBytesMin <= options.classBytesMax, 'buffer pool classes are powers of two');
    for (let c = options.classBytesMin; c <= options.classBytesMax; c *= 2) this.free.push([]);
  }

  /** A buffer of exactly `size` bytes (contents undefined). */
  allocate(size: number): Buffer {
    if (size < this.options.classBytesMin || size > this.options.classBytesMax) return Buffer.allocUnsafe(size);
    const cls = this.classOf(size);
    const list = this.free[cls]!;
    let backing = list.pop();
    if (backing) {
      this.stats.reused++;
      this.stats.pooledBytes -= backing.byteLength;
    } else {
      backing = new ArrayBuffer(this.options.classBytesMin << cls);
      this.stats.allocated++;
    }
    this.issued.add(backing);
    return Buffer.from(backing, 0, size);
  }

  /**
   * Hands `buf` back. Buffers this pool did not issue (or already took back) are ignored, so a
   * caller may pass any buffer; only a buffer starting at its backing store's first byte counts.
   */
  release(buf: Buffer): void {
    const backing = buf.buffer;
    if (!(backing instanceof ArrayBuffer) || buf.byteOffset !== 0 || !this.issued.has(backing)) return;
    this.issued.delete(backing);
    this.stats.released++;
    if (this.options.poison) new Uint8Array(backing).fill(0xee);
    if (this.stats.pooledBytes + backing.byteLength > this.options.pooledBytesMax) {
      this.stats.dropped++;
      return;
    }
    this.free[this.classOf(backing.byteLength)]!.push(backing);
    this.stats.pooledBytes += backing.byteLength;
  }

  private classOf(size: number): number {
    let cls = 0;
    for (let c = this.options.classBytesMin; c < size; c *= 2) cls++;
    return cls;
  }
}

function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;
}
