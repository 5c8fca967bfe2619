// Kafka's small text files: offset checkpoints (recovery point, log start offset, high
// watermark: "0\n<count>\n<topic> <partition> <offset>\n..."), the leader-epoch checkpoint
// ("0\n<count>\n<epoch> <startOffset>\n..."), partition.metadata and meta.properties. Every write
// is atomic (temp file, fsync, rename, fsync directory); a malformed file is a StorageError.
import { assert } from '../util/index.js';
import { StorageError } from './errors.js';
import { logDirName } from './log-dir-name.js';
import type { FileSystem } from './fs.js';

const VERSION = 0;

function parseLines(text: string, path: string, fields: number): string[][] {
  const lines = text.split('\n').filter((l) => l.length > 0);
  if (lines[0] !== String(VERSION)) throw new StorageError('CORRUPT_MESSAGE', `${path}: unknown checkpoint version '${lines[0]}'`);
  const count = Number(lines[1]);
  if (!Number.isSafeInteger(count) || count < 0 || lines.length !== count + 2) {
    throw new StorageError('CORRUPT_MESSAGE', `${path}: expected ${lines[1]} entries, found ${lines.length - 2}`);
  }
  return lines.slice(2).map((l) => {
    const parts = l.split(' ');
    if (parts.length !== fields) throw new StorageError('CORRUPT_MESSAGE', `${path}: malformed line '${l}'`);
    return parts;
  });
}

function int(s: string, path: string): number {
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw new StorageError('CORRUPT_MESSAGE', `${path}: '${s}' is not an integer`);
  return n;
}

/** Offsets per partition, keyed by its log directory name (logDirName). */
export function readOffsetCheckpoint(fs: FileSystem, path: string): Map<string, number> {
  const out = new Map<string, number>();
  if (!fs.exists(path)) return out;
  for (const [topic, partition, offset] of parseLines(fs.readFile(path).toString('utf8'), path, 3)) {
    out.set(logDirName(topic!, int(partition!, path)), int(offset!, path));
  }
  return out;
}

export function writeOffsetCheckpoint(fs: FileSystem, path: string, offsets: Iterable<{ topic: string; partition: number; offset: number }>): void {
  const lines = [...offsets].map((e) => `${e.topic} ${e.partition} ${e.offset}`);
  fs.writeFileAtomic(path, Buffer.from(`${VERSION}\n${lines.length}\n${lines.map((l) => l + '\n').join('')}`));
}

/**
 * The same file from offsets keyed by partition directory name (`<topic>-<partition>`), as the log
 * manager keeps them: one string built in one pass, no object per entry (with 10,000 partitions
 * the periodic checkpoint of four such files stalled the event loop for about 160 ms).
 */
export function writeOffsetCheckpointByDirName(fs: FileSystem, path: string, offsets: ReadonlyMap<string, number>): void {
  fs.writeFileAtomic(path, offsetCheckpointBytesByDirName(offsets));
}

/** The bytes of writeOffsetCheckpointByDirName's file. */
export function offsetCheckpointBytesByDirName(offsets: ReadonlyMap<string, number>): Buffer {
  let text = `${VERSION}\n${offsets.size}\n`;
  for (const [dirName, offset] of offsets) {
    const dash = dirName.lastIndexOf('-');
    assert(dash > 0 && dash < dirName.length - 1, `not a partition directory name: ${dirName}`);
    text += `${dirName.slice(0, dash)} ${dirName.slice(dash + 1)} ${offset}\n`;
  }
  return Buffer.from(text);
}

export interface EpochEntry { epoch: number; startOffset: number }

export function readEpochCheckpoint(fs: FileSystem, path: string): EpochEntry[] {
  if (!fs.exists(path)) return [];
  return parseLines(fs.readFile(path).toString('utf8'), path, 2).map(([e, o]) => ({ epoch: int(e!, path), startOffset: int(o!, path) }));
}

export function writeEpochCheckpoint(fs: FileSystem, path: string, entries: readonly EpochEntry[]): void {
  fs.writeFileAtomic(path, epochCheckpointBytes(entries));
}

/** The leader-epoch-checkpoint file's bytes (also what tiered storage uploads with a segment). */
export function epochCheckpointBytes(entries: readonly EpochEntry[]): Buffer {
  return Buffer.from(`${VERSION}\n${entries.length}\n${entries.map((e) => `${e.epoch} ${e.startOffset}\n`).join('')}`);
}

/** Parses leader-epoch-checkpoint bytes (a file of this log, or one fetched from the remote tier). */
export function parseEpochCheckpoint(bytes: Buffer, name: string): EpochEntry[] {
  return parseLines(bytes.toString('utf8'), name, 2).map(([e, o]) => ({ epoch: int(e!, name), startOffset: int(o!, name) }));
}

/** `key=value` lines (meta.properties); `#` starts a comment. */
export function readProperties(fs: FileSystem, path: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of fs.readFile(path).toString('utf8').split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    const eq = t.indexOf('=');
    if (eq < 0) throw new StorageError('CORRUPT_MESSAGE', `${path}: malformed line '${t}'`);
    out.set(t.slice(0, eq), t.slice(eq + 1));
  }
  return out;
}

export function writeProperties(fs: FileSystem, path: string, props: ReadonlyMap<string, string>, comment: string): void {
  const body = [`#${comment}`, ...[...props].map(([k, v]) => `${k}=${v}`)].join('\n') + '\n';
  fs.writeFileAtomic(path, Buffer.from(body));
}

/** partition.metadata: "version: 0\ntopic_id: <id>\n". */
const PARTITION_METADATA_HEAD = 'version: 0\ntopic_id: ';

/**
 * The topic id in partition.metadata, or null when there is none. A new partition's file is
 * written before its fsync (writePartitionMetadata with durable=false): a power cut in between
 * leaves it empty or cut short, which reads as no file (it is written again); anything else
 * without a topic id is corrupt.
 */
export function readPartitionMetadata(fs: FileSystem, path: string): string | null {
  if (!fs.exists(path)) return null;
  const text = fs.readFile(path).toString('utf8');
  const m = /topic_id: (\S+)\n/.exec(text);
  if (m) return m[1]!;
  if (PARTITION_METADATA_HEAD.startsWith(text) || text.startsWith(PARTITION_METADATA_HEAD)) return null;
  throw new StorageError('CORRUPT_MESSAGE', `${path}: no topic_id`);
}

export function partitionMetadataBytes(topicId: string): Buffer {
  return Buffer.from(`${PARTITION_METADATA_HEAD}${topicId}\n`);
}

/** Written and fsynced before returning (a new partition's is written off the event loop instead). */
export function writePartitionMetadata(fs: FileSystem, path: string, topicId: string): void {
  fs.writeFileAtomic(path, partitionMetadataBytes(topicId));
}
