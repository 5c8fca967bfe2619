// The FileSystem port: every file operation the storage engine does goes through it, so tests
// can run the same code on MemoryFileSystem (which loses unsynced bytes on a simulated power cut
// and injects ENOSPC, EIO and short writes).
//
// Calls are synchronous. Appends and reads hit the page cache at memcpy speed, and a synchronous
// positional write keeps an append atomic with respect to the event loop: the log's in-memory
// state (end offset, indexes) and its file never disagree between two awaits. Kafka's own log
// layer blocks its request thread the same way.
import * as nodeFs from 'node:fs';
import * as nodePath from 'node:path';
import { limits } from '../util/index.js';

export interface FileHandle {
  /** Reads up to `length` bytes at `position` into `buf[offset..]`; returns the bytes read (0 at end of file). */
  read(buf: Buffer, offset: number, length: number, position: number): number;
  /** Writes all of `data` at `position`, or throws (a fault may leave a prefix written). */
  write(data: Buffer, position: number): void;
  size(): number;
  truncate(length: number): void;
  /** fsync: after it returns, the file's bytes survive a power cut. */
  sync(): void;
  /**
   * fdatasync off the event loop on this descriptor: what was written before the call survives a power
   * cut once it resolves. One thread-pool round trip (syncFileAsync takes three: open, fsync,
   * close); close() during it keeps the descriptor until it is done, so it is never reused under it.
   */
  syncAsync(): Promise<void>;
  close(): void;
}

export interface FileSystem {
  open(path: string, opts: { create: boolean }): FileHandle;
  exists(path: string): boolean;
  isDirectory(path: string): boolean;
  /** Names (not paths) in a directory. */
  list(dir: string): string[];
  mkdirs(dir: string): void;
  rename(from: string, to: string): void;
  remove(path: string): void;
  /** remove() off the event loop: unlinking a 1 GiB segment frees its page cache and extents. */
  removeAsync(path: string): Promise<void>;
  removeDir(dir: string): void;
  /** removeDir() off the event loop (a deleted topic's gigabytes). */
  removeDirAsync(dir: string): Promise<void>;
  readFile(path: string): Buffer;
  /** Durable replace: write a temporary file, fsync it, rename over `path`, fsync the directory. */
  writeFileAtomic(path: string, data: Buffer): void;
  /**
   * Writes a whole file (through a temporary name and a rename) without fsync: a power cut may
   * leave it empty or torn, so only for files that are checked when read (a CRC) and that a later
   * syncFileAsync and syncDirAsync make durable.
   */
  writeFileUnsynced(path: string, data: Buffer): void;
  syncDir(dir: string): void;
  /** Writes a whole file and fsyncs it, off the event loop (the caller renames it into place). */
  writeAndSyncFileAsync(path: string, data: Buffer): Promise<void>;
  /** fsync of a directory (its entries: files created, renamed, removed) off the event loop. */
  syncDirAsync(dir: string): Promise<void>;
  /**
   * fsync a file by path off the event loop. A rolled segment is flushed this way so a 1 GiB
   * fsync never blocks appends and fetches (Kafka flushes a rolled segment on a scheduler thread).
   * It opens its own descriptor, so the file cache may close the file meanwhile.
   */
  syncFileAsync(path: string): Promise<void>;
  /** Last modification time in ms (used by retention when a segment has no timestamps). */
  mtimeMs(path: string): number;
  /** A file's length without opening it. */
  fileSize(path: string): number;
  /**
   * How many names the file has (hard links). The local-directory tier links a copied segment's
   * log instead of copying its bytes, and the log replaces such a file before changing it.
   */
  linkCount(path: string): number;
  /**
   * The volume holding `path` (statfs): its size and the bytes an unprivileged writer may still
   * use (f_bavail, what df shows as available), or -1 for both when the volume has no bound.
   */
  statfs(path: string): VolumeSpace;
}

export interface VolumeSpace { totalBytes: number; usableBytes: number }

class NodeFileHandle implements FileHandle {
  constructor(private fd: number, readonly path: string) {}
  read(buf: Buffer, offset: number, length: number, position: number): number {
    let total = 0;
    while (total < length) {
      const n = nodeFs.readSync(this.fd, buf, offset + total, length - total, position + total);
      if (n === 0) break;
      total += n;
    }
    return total;
  }
  write(data: Buffer, position: number): void {
    let done = 0;
    while (done < data.length) {
      done += nodeFs.writeSync(this.fd, data, done, data.length - done, position + done);
    }
  }
  size(): number { return nodeFs.fstatSync(this.fd).size; }
  truncate(length: number): void { nodeFs.ftruncateSync(this.fd, length); }
  sync(): void { nodeFs.fsyncSync(this.fd); }
  private syncsInFlight = 0;
  /** A descriptor close() released while syncs were in flight; closed when the last one ends. */
  private closeAfterSyncs = -1;
  syncAsync(): Promise<void> {
    const fd = this.fd;
    if (fd < 0) return Promise.reject(Object.assign(new Error(`EBADF: fsync '${this.path}'`), { code: 'EBADF' }));
    this.syncsInFlight++;
    // fdatasync: the data and the size (what a read needs), not the timestamps; one journal commit
    // less per call, which the grouped flush.messages rounds pay per dirty file.
    return new Promise((resolve, reject) => nodeFs.fdatasync(fd, (err) => {
      this.syncsInFlight--;
      if (this.syncsInFlight === 0 && this.closeAfterSyncs >= 0) {
        nodeFs.closeSync(this.closeAfterSyncs);
        this.closeAfterSyncs = -1;
      }
      if (err) reject(err); else resolve();
    }));
  }
  close(): void {
    if (this.fd < 0) return;
    if (this.syncsInFlight > 0) this.closeAfterSyncs = this.fd; else nodeFs.closeSync(this.fd);
    this.fd = -1;
  }
}

export class NodeFileSystem implements FileSystem {
  open(path: string, opts: { create: boolean }): FileHandle {
    const fd = nodeFs.openSync(path, opts.create ? nodeFs.constants.O_RDWR | nodeFs.constants.O_CREAT : nodeFs.constants.O_RDWR, 0o644);
    return new NodeFileHandle(fd, path);
  }
  exists(path: string): boolean { return nodeFs.existsSync(path); }
  isDirectory(path: string): boolean {
    try { return nodeFs.statSync(path).isDirectory(); } catch { return false; }
  }
  list(dir: string): string[] { return nodeFs.readdirSync(dir); }
  mkdirs(dir: string): void { nodeFs.mkdirSync(dir, { recursive: true }); }
  rename(from: string, to: string): void { nodeFs.renameSync(from, to); }
  remove(path: string): void { nodeFs.rmSync(path, { force: true }); }
  removeAsync(path: string): Promise<void> { return nodeFs.promises.rm(path, { force: true }); }
  removeDir(dir: string): void { nodeFs.rmSync(dir, { recursive: true, force: true }); }
  removeDirAsync(dir: string): Promise<void> { return nodeFs.promises.rm(dir, { recursive: true, force: true }); }
  readFile(path: string): Buffer { return nodeFs.readFileSync(path); }
  writeFileAtomic(path: string, data: Buffer): void {
    const tmp = `${path}.tmp`;
    const fd = nodeFs.openSync(tmp, 'w', 0o644);
    try {
      nodeFs.writeSync(fd, data, 0, data.length, 0);
      nodeFs.fsyncSync(fd);
    } finally {
      nodeFs.closeSync(fd);
    }
    nodeFs.renameSync(tmp, path);
    this.syncDir(nodePath.dirname(path));
  }
  writeFileUnsynced(path: string, data: Buffer): void {
    const tmp = `${path}.tmp`;
    nodeFs.writeFileSync(tmp, data, { mode: 0o644 });
    nodeFs.renameSync(tmp, path);
  }
  syncDir(dir: string): void {
    const fd = nodeFs.openSync(dir, 'r');
    try { nodeFs.fsyncSync(fd); } finally { nodeFs.closeSync(fd); }
  }
  async writeAndSyncFileAsync(path: string, data: Buffer): Promise<void> {
    const h = await nodeFs.promises.open(path, 'w', 0o644);
    try {
      await h.writeFile(data);
      await h.sync();
    } finally {
      await h.close();
    }
  }
  async syncDirAsync(dir: string): Promise<void> {
    const h = await nodeFs.promises.open(dir, 'r');
    try { await h.sync(); } finally { await h.close(); }
  }
  async syncFileAsync(path: string): Promise<void> {
    const h = await nodeFs.promises.open(path, 'r');
    try { await h.sync(); } finally { await h.close(); }
  }
  mtimeMs(path: string): number { return nodeFs.statSync(path).mtimeMs; }
  fileSize(path: string): number { return nodeFs.statSync(path).size; }
  linkCount(path: string): number { return nodeFs.statSync(path).nlink; }
  statfs(path: string): VolumeSpace {
    const s = nodeFs.statfsSync(path);
    return { totalBytes: s.blocks * s.bsize, usableBytes: s.bavail * s.bsize };
  }
}

/**
 * Bounds the number of open file descriptors: segment files are opened on first use and closed
 * when they are the least recently used beyond `capacity`. Opening 10,000 partitions therefore
 * costs no descriptors until they are read or written.
 */
export class FileCache {
  private readonly open = new Map<string, FileHandle>();
  constructor(readonly fs: FileSystem, readonly capacity: number = limits.openFilesMax) {}

  get(path: string): FileHandle {
    let h = this.open.get(path);
    if (h) {
      // Re-insert so Map iteration order is least recently used first.
      this.open.delete(path);
      this.open.set(path, h);
      return h;
    }
    h = this.fs.open(path, { create: true });
    this.open.set(path, h);
    if (this.open.size > this.capacity) {
      const [oldest, handle] = this.open.entries().next().value as [string, FileHandle];
      this.open.delete(oldest);
      handle.close();
    }
    return h;
  }

  /** Closes a path's descriptor (before a rename or delete). */
  close(path: string): void {
    const h = this.open.get(path);
    if (!h) return;
    this.open.delete(path);
    h.close();
  }

  closeAll(): void {
    for (const h of this.open.values()) h.close();
    this.open.clear();
  }

  get openCount(): number { return this.open.size; }
}
