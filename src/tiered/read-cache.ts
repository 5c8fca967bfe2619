// A cache of remote bytes bounded by their total size: least recently used entries go first. One
// instance holds data chunks, another whole index files (remote.log.index.file.cache.total.size.bytes).
// Concurrent misses for one key share one load, so N readers of a cold chunk make one GET.
import { assert } from '../util/index.js';

export interface ReadCacheStats {
  readonly bytes: number;
  readonly entries: number;
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
}

export class ReadCache {
  // Map iteration order is insertion order: re-inserting on a hit keeps the least recent first.
  private readonly entries = new Map<string, Buffer>();
  private readonly loading = new Map<string, Promise<Buffer>>();
  private bytes = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(readonly bytesMax: number) {
    assert(Number.isSafeInteger(bytesMax) && bytesMax >= 0, `cache bound ${bytesMax} must be a non-negative integer`);
  }

  get(key: string): Buffer | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    this.hits++;
    return value;
  }

  /** Adds an entry, evicting the least recently used until it fits; one bigger than the bound is not kept. */
  set(key: string, value: Buffer): void {
    this.remove(key);
    if (value.length > this.bytesMax) return;
    while (this.bytes + value.length > this.bytesMax) {
      const oldest = this.entries.keys().next();
      assert(oldest.done !== true, 'cache bytes counted with no entries');
      this.remove(oldest.value);
      this.evictions++;
    }
    this.entries.set(key, value);
    this.bytes += value.length;
    assert(this.bytes <= this.bytesMax, 'cache over its bound');
  }

  /** The cached value, or the result of `load` (shared with any load of the same key under way). */
  async getOrLoad(key: string, load: () => Promise<Buffer>): Promise<Buffer> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const pending = this.loading.get(key);
    if (pending !== undefined) return pending;
    this.misses++;
    const p = load().then((value) => { this.set(key, value); return value; })
      .finally(() => { this.loading.delete(key); });
    this.loading.set(key, p);
    return p;
  }

  /** Drops every entry whose key starts with `prefix` (a deleted segment's chunks and indexes). */
  invalidatePrefix(prefix: string): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.remove(key);
  }

  remove(key: string): void {
    const value = this.entries.get(key);
    if (value === undefined) return;
    this.entries.delete(key);
    this.bytes -= value.length;
  }

  stats(): ReadCacheStats {
    return { bytes: this.bytes, entries: this.entries.size, hits: this.hits, misses: this.misses, evictions: this.evictions };
  }
}
