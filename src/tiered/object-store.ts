// The port below the RemoteStorageManager: a flat store of named immutable objects (a directory
// tree, an S3 bucket). The segment layout, chunked reads and caching live above it, once, in
// chunked-storage-manager.ts, so every backend gets them.

/**
 * What to upload: a local file (streamed, never read whole) or bytes already in memory. `link`: the
 * file's owner never changes it in place again (a rolled segment's log, which the log replaces by
 * a copy of its own before a truncation), so a store on the same file system may give the object
 * the file itself, a hard link, instead of a copy of its bytes.
 */
export type ObjectSource = { readonly path: string; readonly link?: boolean } | { readonly bytes: Buffer };

/** One object of a `putAll`. */
export interface ObjectPut { readonly key: string; readonly source: ObjectSource }

export interface ObjectStore {
  /**
   * Writes the object atomically: a reader sees the old object, no object, or the whole new one,
   * never a part, even if the process dies mid-write.
   */
  put(key: string, source: ObjectSource): Promise<void>;
  /**
   * Writes a segment's objects, each as atomically as `put`: those of `first` at once, then `last`,
   * which becomes visible only after all of them (a segment's log after its indexes, so a copy cut
   * short has no log object). Every write settles before a failure is reported, so the cleanup of
   * a failed attempt never races a write still running. A store may make the objects durable
   * together (the local directory fsyncs the folder once, not once per object).
   */
  putAll(first: readonly ObjectPut[], last: ObjectPut): Promise<void>;
  /**
   * Bytes [start, endExclusive) of the object; fewer only if the object is shorter. Callers keep
   * ranges small (one chunk). RemoteResourceNotFoundError when there is no such object.
   */
  getRange(key: string, start: number, endExclusive: number): Promise<Buffer>;
  /** The whole object, refused beyond `bytesMax`. RemoteResourceNotFoundError when absent. */
  get(key: string, bytesMax: number): Promise<Buffer>;
  /** Idempotent. */
  delete(key: string): Promise<void>;
  /** Keys under a prefix, in no particular order (for orphan cleanup and tests). */
  list(prefix: string): Promise<string[]>;
  close(): Promise<void>;
}

/** `putAll` as one `put` per object, for stores with nothing to share between them (S3: one PUT each). */
export async function putEach(store: ObjectStore, first: readonly ObjectPut[], last: ObjectPut): Promise<void> {
  const settled = await Promise.allSettled(first.map((o) => store.put(o.key, o.source)));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  await store.put(last.key, last.source);
}

/** Keys are relative paths of safe characters; no empty, `.` or `..` component. */
export function isSafeObjectKey(key: string): boolean {
  if (key.length === 0 || key.length > 1024 || !/^[A-Za-z0-9._\-/=]+$/.test(key)) return false;
  return key.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}
