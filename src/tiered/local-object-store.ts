// The default backend: objects as files under one directory (remote.log.dir style), which needs
// nothing installed and suits laptops and tests. Each object is written to a temporary file,
// fsynced, renamed into place and its directory fsynced, so after a crash an object is either
// whole or absent; leftover temporary files are never listed and are swept on open.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, link, mkdir, open, type FileHandle, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { RemoteResourceNotFoundError, RemoteStorageError } from './errors.js';
import { isSafeObjectKey, type ObjectPut, type ObjectSource, type ObjectStore } from './object-store.js';

const TEMP_MARK = '.tmp-';

export interface LocalObjectStoreOptions {
  /** Link a source that allows it (ObjectSource.link) instead of copying it, where one file system holds both (default true). */
  linkFiles?: boolean;
}

export class LocalObjectStore implements ObjectStore {
  private constructor(readonly root: string, private readonly linkFiles: boolean) {}

  /** Opens (creating) the directory and removes temporary files a crash left behind. */
  static async open(root: string, o: LocalObjectStoreOptions = {}): Promise<LocalObjectStore> {
    try {
      await mkdir(root, { recursive: true });
    } catch (e) {
      throw storageError(`cannot create remote storage directory ${root}`, e);
    }
    const store = new LocalObjectStore(root, o.linkFiles ?? true);
    for (const file of await store.walk(root, true)) if (file.includes(TEMP_MARK)) await rm(file, { force: true });
    return store;
  }

  private pathOf(key: string): string {
    if (!isSafeObjectKey(key)) throw new RemoteStorageError(`unsafe object key ${JSON.stringify(key)}`, { retriable: false });
    return join(this.root, ...key.split('/'));
  }

  async put(key: string, source: ObjectSource): Promise<void> {
    const folders = new Set<string>();
    await this.write({ key, source }, folders);
    await syncFolders(folders, key);
  }

  async putAll(first: readonly ObjectPut[], last: ObjectPut): Promise<void> {
    // Each object's data is fsynced before its rename, so whatever a crash leaves visible is whole;
    // the renames become durable together, by one fsync of their folder (six objects of a segment
    // cost one directory fsync, not six).
    const folders = new Set<string>();
    const settled = await Promise.allSettled(first.map((o) => this.write(o, folders)));
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    await this.write(last, folders);
    await syncFolders(folders, last.key);
  }

  /** Writes the object to a temporary file, fsyncs it and renames it into place; its folder still to be fsynced. */
  private async write({ key, source }: ObjectPut, folders: Set<string>): Promise<void> {
    const path = this.pathOf(key);
    const temp = `${path}${TEMP_MARK}${randomBytes(6).toString('hex')}`;
    try {
      if ('bytes' in source) {
        const out = await openCreating(temp);
        try {
          await out.writeFile(source.bytes);
          await out.sync();
        } finally {
          await out.close();
        }
      } else {
        // A file its owner never changes again is linked where the store shares its file system:
        // no byte written twice, so tiering a segment costs the disk nothing (a copy on one disk
        // halved full-speed produce on a 2-core machine). Else the kernel copies the file
        // (copy_file_range, or a reflink where the file system shares extents): no pass of a
        // segment's bytes through JavaScript buffers.
        if (!(source.link === true && this.linkFiles && await linkCreating(source.path, temp))) await copyCreating(source.path, temp);
        const out = await open(temp, 'r+');
        try {
          await out.sync();
        } finally {
          await out.close();
        }
      }
      await rename(temp, path);
      folders.add(dirname(path));
    } catch (e) {
      await rm(temp, { force: true }).catch(() => undefined);
      if (e instanceof RemoteStorageError) throw e;
      throw storageError(`cannot write ${key}`, e);
    }
  }

  async getRange(key: string, start: number, endExclusive: number): Promise<Buffer> {
    const path = this.pathOf(key);
    const length = Math.max(0, endExclusive - start);
    try {
      const f = await open(path, 'r');
      try {
        const buf = Buffer.allocUnsafe(length);
        let filled = 0;
        while (filled < length) {
          const { bytesRead } = await f.read(buf, filled, length - filled, start + filled);
          if (bytesRead === 0) break;
          filled += bytesRead;
        }
        return filled === length ? buf : buf.subarray(0, filled);
      } finally {
        await f.close();
      }
    } catch (e) {
      throw storageError(`cannot read ${key}`, e);
    }
  }

  async get(key: string, bytesMax: number): Promise<Buffer> {
    const path = this.pathOf(key);
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch (e) {
      throw storageError(`cannot read ${key}`, e);
    }
    if (size > bytesMax) throw new RemoteStorageError(`${key} has ${size} bytes, more than ${bytesMax}`, { retriable: false });
    return this.getRange(key, 0, size);
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key);
    try {
      await rm(path, { force: true });
      // An emptied partition folder goes too, so a deleted topic leaves nothing behind.
      await rmdir(dirname(path)).catch(() => undefined);
    } catch (e) {
      throw storageError(`cannot delete ${key}`, e);
    }
  }

  async list(prefix: string): Promise<string[]> {
    const files = await this.walk(this.root, false);
    return files.map((f) => relative(this.root, f).split(sep).join('/')).filter((k) => k.startsWith(prefix));
  }

  private async walk(dir: string, withTemp: boolean): Promise<string[]> {
    const out: string[] = [];
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return out;
      throw storageError(`cannot list ${dir}`, e);
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) out.push(...await this.walk(path, withTemp));
      else if (withTemp || !entry.name.includes(TEMP_MARK)) out.push(path);
    }
    return out;
  }

  async close(): Promise<void> {}
}

/** Opens a new file, creating its folder. */
async function openCreating(path: string): Promise<FileHandle> {
  return inFolder(path, () => open(path, 'w'));
}

/**
 * Links a file under a new path, creating its folder; false where links cannot be made (another
 * file system, or one without hard links), so the caller copies instead.
 */
async function linkCreating(from: string, to: string): Promise<boolean> {
  try {
    await inFolder(to, () => link(from, to));
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EXDEV' || code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'EMLINK') return false;
    throw e;
  }
}

/** Copies a file to a new path, creating its folder. */
async function copyCreating(from: string, to: string): Promise<void> {
  await inFolder(to, () => copyFile(from, to, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE));
}

/**
 * Runs `create` (which makes `path`) after creating its folder; once more on ENOENT, since a
 * concurrent delete may remove an emptied folder in between. A missing source stays ENOENT on
 * the second attempt and is reported as such.
 */
async function inFolder<T>(path: string, create: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    await mkdir(dirname(path), { recursive: true });
    try {
      return await create();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 0) throw e;
    }
  }
}

async function syncFolders(folders: Set<string>, key: string): Promise<void> {
  try {
    await Promise.all([...folders].map(syncDirectory));
  } catch (e) {
    throw storageError(`cannot write ${key}`, e);
  }
}

async function syncDirectory(dir: string): Promise<void> {
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}

function storageError(message: string, e: unknown): RemoteStorageError {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return new RemoteResourceNotFoundError(`${message}: not found`, { cause: e });
  // A full or failing disk may recover; a permission problem will not.
  return new RemoteStorageError(`${message}: ${(e as Error).message}`, { retriable: code !== 'EACCES' && code !== 'EPERM', cause: e });
}
