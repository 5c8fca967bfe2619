// An in-memory FileSystem for tests. Every file keeps two contents: what the process sees, and
// what has been fsynced. `crash()` is a power cut: each file falls back to its synced bytes, plus
// (when a Prng is given) a random prefix of what was written after the last sync, which is how a
// torn tail appears on a real disk. Faults (ENOSPC, EIO, short writes) are injected per operation
// and path. Directory entries (create, rename, remove) are durable at once; this is the usual
// journaling file system behaviour for metadata, and the engine still fsyncs directories where
// POSIX requires it.
import * as nodePath from 'node:path';
import type { Prng } from '../util/index.js';
import type { FileHandle, FileSystem, VolumeSpace } from './fs.js';

interface MemFile {
  data: Buffer;
  length: number;
  synced: Buffer;
  /** Order of the sync that produced `synced` (see syncFileAsync). */
  syncedSeq?: number;
  mtimeMs: number;
}

export type FaultOp = 'open' | 'read' | 'write' | 'sync' | 'truncate' | 'rename' | 'remove' | 'writeFileAtomic';

export interface Fault {
  op: FaultOp;
  code: 'ENOSPC' | 'EIO';
  /** Only paths matching this. */
  path?: RegExp;
  /** For writes: bytes written before the error (a short write). */
  writtenBytes?: number;
  /** Fire on the n-th matching call (1 = next), then stop; `repeat` keeps firing after. */
  nth?: number;
  repeat?: boolean;
}

function fsError(code: string, op: string, path: string): Error {
  return Object.assign(new Error(`${code}: ${op} '${path}'`), { code });
}

export class MemoryFileSystem implements FileSystem {
  private files = new Map<string, MemFile>();
  private dirs = new Set<string>(['/']);
  /** dir -> names in it, so listing a directory does not walk every file. */
  private children = new Map<string, Set<string>>([['/', new Set()]]);
  private used = 0;

  private link(path: string): void {
    const dir = nodePath.dirname(path);
    let set = this.children.get(dir);
    if (!set) { set = new Set(); this.children.set(dir, set); }
    set.add(nodePath.basename(path));
  }
  private unlink(path: string): void { this.children.get(nodePath.dirname(path))?.delete(nodePath.basename(path)); }
  private setFile(path: string, f: MemFile): void {
    const old = this.files.get(path);
    if (old) this.used -= old.length;
    this.files.set(path, f);
    this.used += f.length;
    this.link(path);
  }
  private dropFile(path: string): void {
    const f = this.files.get(path);
    if (!f) return;
    this.used -= f.length;
    this.files.delete(path);
    this.unlink(path);
  }
  private faults: (Fault & { seen: number })[] = [];
  /** Counts power cuts: work of an earlier process (an async fsync) does not survive one. */
  private generation = 0;
  private syncSeq = 0;
  /** Total bytes the disk holds; writes beyond it fail with ENOSPC after a short write. */
  capacityBytes = Infinity;
  now: () => number = () => 0;
  /** Counters a test can read. */
  readonly stats = { writes: 0, syncs: 0, opens: 0, reads: 0, readBytes: 0 };

  inject(fault: Fault): void { this.faults.push({ ...fault, seen: 0 }); }
  clearFaults(): void { this.faults = []; }

  private check(op: FaultOp, path: string): Fault | undefined {
    for (let i = 0; i < this.faults.length; i++) {
      const f = this.faults[i]!;
      if (f.op !== op || (f.path && !f.path.test(path))) continue;
      f.seen++;
      if (f.seen < (f.nth ?? 1)) continue;
      if (!f.repeat) this.faults.splice(i, 1);
      return f;
    }
    return undefined;
  }

  private fail(op: FaultOp, path: string): void {
    const f = this.check(op, path);
    if (f) throw fsError(f.code, op, path);
  }

  get usedBytes(): number { return this.used; }

  /** capacityBytes and what is left of it (-1 for both without a capacity). */
  statfs(_path: string): VolumeSpace {
    if (this.capacityBytes === Infinity) return { totalBytes: -1, usableBytes: -1 };
    return { totalBytes: this.capacityBytes, usableBytes: Math.max(0, this.capacityBytes - this.used) };
  }

  private file(path: string): MemFile {
    const f = this.files.get(nodePath.resolve(path));
    if (!f) throw fsError('ENOENT', 'open', path);
    return f;
  }

  open(path: string, opts: { create: boolean }): FileHandle {
    path = nodePath.resolve(path);
    this.fail('open', path);
    this.stats.opens++;
    if (!this.dirs.has(nodePath.dirname(path))) throw fsError('ENOENT', 'open', path);
    if (!this.files.has(path)) {
      if (!opts.create) throw fsError('ENOENT', 'open', path);
      this.setFile(path, { data: Buffer.alloc(0), length: 0, synced: Buffer.alloc(0), mtimeMs: this.now() });
    }
    return new MemoryFileHandle(this, path);
  }

  /** @internal used by handles */
  _read(path: string, buf: Buffer, offset: number, length: number, position: number): number {
    this.stats.reads++;
    this.fail('read', path);
    const f = this.file(path);
    const n = Math.max(0, Math.min(length, f.length - position));
    f.data.copy(buf, offset, position, position + n);
    this.stats.readBytes += n;
    return n;
  }

  /** @internal */
  _write(path: string, data: Buffer, position: number): void {
    const f = this.file(path);
    this.stats.writes++;
    const fault = this.check('write', path);
    const growth = Math.max(0, position + data.length - f.length);
    let n = data.length;
    let error: Error | undefined;
    if (fault) { n = Math.min(n, fault.writtenBytes ?? 0); error = fsError(fault.code, 'write', path); }
    if (growth > 0 && this.usedBytes + growth > this.capacityBytes) {
      n = Math.min(n, Math.max(0, this.capacityBytes - this.usedBytes - Math.max(0, position - f.length)));
      error = fsError('ENOSPC', 'write', path);
    }
    if (n > 0) {
      this.ensure(f, position + n);
      data.copy(f.data, position, 0, n);
      const grown = Math.max(f.length, position + n);
      this.used += grown - f.length;
      f.length = grown;
      f.mtimeMs = this.now();
    }
    if (error) throw error;
  }

  private ensure(f: MemFile, length: number): void {
    if (f.data.length >= length) return;
    const next = Buffer.alloc(Math.max(length, f.data.length * 2, 4096));
    f.data.copy(next, 0, 0, f.length);
    f.data = next;
  }

  /** @internal */
  _size(path: string): number { return this.file(path).length; }

  /** @internal */
  _truncate(path: string, length: number): void {
    this.fail('truncate', path);
    const f = this.file(path);
    if (length > f.length) {
      this.ensure(f, length);
      f.data.fill(0, f.length, length);
    }
    this.used += length - f.length;
    f.length = length;
  }

  /** @internal */
  _sync(path: string): void {
    this.fail('sync', path);
    this.stats.syncs++;
    const f = this.file(path);
    f.synced = Buffer.from(f.data.subarray(0, f.length));
    f.syncedSeq = ++this.syncSeq;
  }

  exists(path: string): boolean {
    path = nodePath.resolve(path);
    return this.files.has(path) || this.dirs.has(path);
  }
  isDirectory(path: string): boolean { return this.dirs.has(nodePath.resolve(path)); }

  list(dir: string): string[] {
    dir = nodePath.resolve(dir);
    if (!this.dirs.has(dir)) throw fsError('ENOENT', 'list', dir);
    return [...(this.children.get(dir) ?? [])].sort();
  }

  mkdirs(dir: string): void {
    dir = nodePath.resolve(dir);
    while (!this.dirs.has(dir)) {
      this.dirs.add(dir);
      if (!this.children.has(dir)) this.children.set(dir, new Set());
      this.link(dir);
      dir = nodePath.dirname(dir);
    }
  }

  rename(from: string, to: string): void {
    from = nodePath.resolve(from); to = nodePath.resolve(to);
    this.fail('rename', from);
    const f = this.files.get(from);
    if (f) {
      this.dropFile(from);
      this.setFile(to, f);
      return;
    }
    if (!this.dirs.has(from)) throw fsError('ENOENT', 'rename', from);
    const names = [...(this.children.get(from) ?? [])];
    this.mkdirs(to);
    for (const n of names) this.rename(nodePath.join(from, n), nodePath.join(to, n));
    this.dirs.delete(from);
    this.children.delete(from);
    this.unlink(from);
  }

  remove(path: string): void {
    path = nodePath.resolve(path);
    this.fail('remove', path);
    this.dropFile(path);
  }

  async removeAsync(path: string): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.remove(path);
  }

  async removeDirAsync(dir: string): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.removeDir(dir);
  }

  removeDir(dir: string): void {
    dir = nodePath.resolve(dir);
    this.fail('remove', dir);
    if (!this.dirs.has(dir)) return;
    for (const n of [...(this.children.get(dir) ?? [])]) {
      const p = nodePath.join(dir, n);
      if (this.dirs.has(p)) this.removeDir(p); else this.dropFile(p);
    }
    this.dirs.delete(dir);
    this.children.delete(dir);
    this.unlink(dir);
  }

  readFile(path: string): Buffer {
    const f = this.file(path);
    this.fail('read', nodePath.resolve(path));
    return Buffer.from(f.data.subarray(0, f.length));
  }

  writeFileAtomic(path: string, data: Buffer): void {
    path = nodePath.resolve(path);
    this.fail('writeFileAtomic', path);
    if (!this.dirs.has(nodePath.dirname(path))) throw fsError('ENOENT', 'writeFileAtomic', path);
    this.stats.syncs += 2; // the temporary file and the directory
    this.setFile(path, { data: Buffer.from(data), length: data.length, synced: Buffer.from(data), mtimeMs: this.now() });
  }

  writeFileUnsynced(path: string, data: Buffer): void {
    path = nodePath.resolve(path);
    this.fail('writeFileAtomic', path);
    if (!this.dirs.has(nodePath.dirname(path))) throw fsError('ENOENT', 'writeFileUnsynced', path);
    // Nothing durable yet: a power cut before a sync leaves the file empty.
    this.setFile(path, { data: Buffer.from(data), length: data.length, synced: Buffer.alloc(0), mtimeMs: this.now() });
  }

  syncDir(dir: string): void {
    if (!this.dirs.has(nodePath.resolve(dir))) throw fsError('ENOENT', 'syncDir', dir);
  }

  /** As writeFileAtomic's first half, completing on a later turn; a power cut first loses it. */
  async writeAndSyncFileAsync(path: string, data: Buffer): Promise<void> {
    path = nodePath.resolve(path);
    const generation = this.generation;
    const bytes = Buffer.from(data);
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (generation !== this.generation) throw fsError('EIO', 'fsync', path);
    this.fail('writeFileAtomic', path);
    if (!this.dirs.has(nodePath.dirname(path))) throw fsError('ENOENT', 'writeAndSyncFileAsync', path);
    this.setFile(path, { data: bytes, length: bytes.length, synced: Buffer.from(bytes), mtimeMs: this.now() });
  }

  /** Directory entries are not modelled (files never vanish in a power cut); completes on a later turn. */
  async syncDirAsync(dir: string): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (!this.dirs.has(nodePath.resolve(dir))) throw fsError('ENOENT', 'syncDir', dir);
  }

  /**
   * Completes on a later turn of the event loop, so a power cut can come first. Only the bytes the
   * file held at the call are made durable: a real fsync may also take later writes, but nothing
   * may count on that. Faults are checked at completion, as the fsync runs then.
   */
  async syncFileAsync(path: string): Promise<void> {
    path = nodePath.resolve(path);
    const generation = this.generation;
    const f = this.files.get(path);
    const bytes = f === undefined ? undefined : Buffer.from(f.data.subarray(0, f.length));
    const seq = ++this.syncSeq;
    await new Promise<void>((resolve) => setImmediate(resolve));
    // A sync started before a power cut belongs to the process that died.
    if (generation !== this.generation) throw fsError('EIO', 'fsync', path);
    this.fail('sync', path);
    if (f === undefined || this.files.get(path) !== f) throw fsError('ENOENT', 'fsync', path);
    this.stats.syncs++;
    // A sync that started later and finished first already covers these bytes.
    if (seq > (f.syncedSeq ?? 0)) { f.synced = bytes!; f.syncedSeq = seq; }
  }

  mtimeMs(path: string): number { return this.file(path).mtimeMs; }
  fileSize(path: string): number { return this.file(path).length; }
  /** No hard links in memory: every file has its one name. */
  linkCount(path: string): number { this.file(path); return 1; }

  /**
   * A power cut: every file keeps its synced bytes and, with a Prng, a random share of the bytes
   * written since (a torn tail). Open handles of the old process must not be used afterwards.
   */
  crash(prng?: Prng): void {
    this.generation++;
    for (const f of this.files.values()) {
      let keep = f.synced.length;
      const unsynced = f.length - f.synced.length;
      if (prng && unsynced > 0 && f.data.subarray(0, f.synced.length).equals(f.synced)) {
        keep += Math.floor(prng.next() * (unsynced + 1));
      }
      const bytes = keep > f.synced.length ? Buffer.from(f.data.subarray(0, keep)) : Buffer.from(f.synced);
      f.data = bytes;
      this.used += bytes.length - f.length;
      f.length = bytes.length;
      f.synced = Buffer.from(bytes);
    }
    this.faults = [];
  }

  /** Flips one byte of a file (corruption a CRC must catch). */
  corrupt(path: string, position: number): void {
    const f = this.file(path);
    f.data[position] = (f.data[position]! ^ 0xff) & 0xff;
    f.synced = Buffer.from(f.data.subarray(0, f.length));
  }
}

class MemoryFileHandle implements FileHandle {
  private closed = false;
  constructor(private readonly fs: MemoryFileSystem, readonly path: string) {}
  private live(): void { if (this.closed) throw fsError('EBADF', 'use', this.path); }
  read(buf: Buffer, offset: number, length: number, position: number): number { this.live(); return this.fs._read(this.path, buf, offset, length, position); }
  write(data: Buffer, position: number): void { this.live(); this.fs._write(this.path, data, position); }
  size(): number { this.live(); return this.fs._size(this.path); }
  truncate(length: number): void { this.live(); this.fs._truncate(this.path, length); }
  sync(): void { this.live(); this.fs._sync(this.path); }
  syncAsync(): Promise<void> {
    if (this.closed) return Promise.reject(fsError('EBADF', 'fsync', this.path));
    return this.fs.syncFileAsync(this.path);
  }
  close(): void { this.closed = true; }
}
