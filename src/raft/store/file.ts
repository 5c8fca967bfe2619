// File-backed stores with node:fs. The quorum-state file is replaced atomically (write a temp file,
// fsync it, rename it over the old one, fsync the directory). The log is a simple file of
// length-prefixed, CRC32C-checked frames, one per LogOp (appends binary, the rare truncations and
// snapshot markers JSON); a torn or corrupt tail is ignored on load. Snapshots are separate files written the same atomic way. This format was a stopgap:
// node-main's log is StorageLogStore (storage.ts, on the storage engine); this one stays for comparison.
import { closeSync, existsSync, fsync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32c } from '../../records/index.js';
import { assert } from '../../util/index.js';
import { batchesOf, entriesOf } from '../core/batch.js';
import type { Entry, EntryKind, LogOp, QuorumState, Snapshot } from '../core/types.js';
import { MemoryLogStore } from './memory.js';
import type { FileSystem } from '../../storage/index.js';
import type { LoadedLog, LogStore, QuorumStateStore } from './ports.js';

function writeFileAtomic(dir: string, name: string, data: Uint8Array): void {
  const tmp = join(dir, `${name}.tmp`);
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(dir, name));
  const dirFd = openSync(dir, 'r');
  try { fsyncSync(dirFd); } finally { closeSync(dirFd); }
}

export class FileQuorumStateStore implements QuorumStateStore {
  /** `fs`: the storage room's FileSystem port (a broker's metadata log directory); default node:fs. */
  constructor(private readonly dir: string, private readonly fs?: FileSystem) {
    if (fs !== undefined) fs.mkdirs(dir);
    else mkdirSync(dir, { recursive: true });
  }

  read(): QuorumState | undefined {
    const path = join(this.dir, 'quorum-state');
    const fs = this.fs;
    if (!(fs !== undefined ? fs.exists(path) : existsSync(path))) return undefined;
    const text = fs !== undefined ? fs.readFile(path).toString('utf8') : readFileSync(path, 'utf8');
    const json = JSON.parse(text) as { leaderEpoch: number; leaderId: number; votedId: number };
    return {
      epoch: json.leaderEpoch,
      ...(json.leaderId >= 0 ? { leaderId: json.leaderId } : {}),
      ...(json.votedId >= 0 ? { votedId: json.votedId } : {}),
    };
  }

  write(state: QuorumState): void {
    // Kafka's field names, with -1 for "none".
    const json = { leaderEpoch: state.epoch, leaderId: state.leaderId ?? -1, votedId: state.votedId ?? -1, data_version: 0 };
    const bytes = new TextEncoder().encode(JSON.stringify(json));
    if (this.fs !== undefined) this.fs.writeFileAtomic(join(this.dir, 'quorum-state'), Buffer.from(bytes));
    else writeFileAtomic(this.dir, 'quorum-state', bytes);
  }
}

interface FrameEntry { o: number; e: number; k: EntryKind; v: string }
type Frame = { a: FrameEntry[] } | { t: number } | { s: { o: number; e: number; r: boolean } };

export class FileLogStore implements LogStore {
  private fd: number;
  private readonly logPath: string;

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.logPath = join(dir, 'raft.log');
    this.fd = openSync(this.logPath, 'a');
  }

  load(): LoadedLog {
    const mem = new MemoryLogStore();
    const snapshot = this.readSnapshot();
    if (snapshot !== undefined) mem.apply([{ kind: 'snapshot', snapshot, replaceLog: true }]);
    const bytes = existsSync(this.logPath) ? readFileSync(this.logPath) : Buffer.alloc(0);
    for (let at = 0; at + 8 <= bytes.length;) {
      const length = bytes.readUInt32BE(at);
      const crc = bytes.readUInt32BE(at + 4);
      if (at + 8 + length > bytes.length) break;
      const body = bytes.subarray(at + 8, at + 8 + length);
      if (crc32c(body) !== crc) break;
      const op = body[0] === APPEND_FRAME ? keepAboveSnapshot(decodeAppend(body), snapshot)
        : toOp(JSON.parse(body.toString('utf8')) as Frame, snapshot);
      if (op !== undefined) mem.apply([op]);
      at += 8 + length;
    }
    mem.sync();
    return mem.load();
  }

  apply(ops: readonly LogOp[]): void {
    for (const op of ops) {
      if (op.kind === 'snapshot') writeFileAtomic(this.dir, 'snapshot', encodeSnapshot(op.snapshot));
      this.writeFrame(op.kind === 'append' ? encodeAppend(entriesOf(op.batches)) : fromOp(op));
    }
  }

  sync(): void { fsyncSync(this.fd); }
  syncAsync(done: (err: Error | null) => void): void { fsync(this.fd, done); }
  close(): void { closeSync(this.fd); }

  private writeFrame(frame: Frame | Buffer): void {
    const body = Buffer.isBuffer(frame) ? frame : Buffer.from(JSON.stringify(frame), 'utf8');
    const out = Buffer.allocUnsafe(8 + body.length);
    out.writeUInt32BE(body.length, 0);
    out.writeUInt32BE(crc32c(body), 4);
    body.copy(out, 8);
    writeSync(this.fd, out);
  }

  private readSnapshot(): Snapshot | undefined {
    const path = join(this.dir, 'snapshot');
    if (!existsSync(path)) return undefined;
    const bytes = readFileSync(path);
    const endOffset = Number(bytes.readBigInt64BE(0));
    const epoch = bytes.readInt32BE(8);
    return { id: { endOffset, epoch }, data: new Uint8Array(bytes.subarray(12)) };
  }
}

/** First byte of a binary append frame (a JSON frame starts with '{'). */
const APPEND_FRAME = 1;
const ENTRY_HEADER_BYTES = 8 + 4 + 1 + 4;

/** [u8 1][u32 count] then per entry [i64 offset][i32 epoch][u8 kind: 0 data, 1 control, 2 voters][u32 length][value]. */
function encodeAppend(entries: readonly Entry[]): Buffer {
  let bytes = 5;
  for (const e of entries) bytes += ENTRY_HEADER_BYTES + e.value.length;
  const buf = Buffer.allocUnsafe(bytes);
  buf[0] = APPEND_FRAME;
  buf.writeUInt32BE(entries.length, 1);
  let at = 5;
  for (const e of entries) {
    buf.writeBigInt64BE(BigInt(e.offset), at);
    buf.writeInt32BE(e.epoch, at + 8);
    buf[at + 12] = e.kind === 'control' ? 1 : e.kind === 'voters' ? 2 : 0;
    buf.writeUInt32BE(e.value.length, at + 13);
    buf.set(e.value, at + ENTRY_HEADER_BYTES);
    at += ENTRY_HEADER_BYTES + e.value.length;
  }
  return buf;
}

function decodeAppend(body: Buffer): Entry[] {
  const count = body.readUInt32BE(1);
  // The frame passed its CRC, so a bad length here is a bug in encodeAppend, not a torn write.
  assert(count * ENTRY_HEADER_BYTES <= body.length - 5, 'append frame count exceeds its bytes');
  const entries: Entry[] = [];
  let at = 5;
  for (let i = 0; i < count; i++) {
    const offset = Number(body.readBigInt64BE(at));
    const epoch = body.readInt32BE(at + 8);
    const kind: EntryKind = body[at + 12] === 1 ? 'control' : body[at + 12] === 2 ? 'voters' : 'data';
    const length = body.readUInt32BE(at + 13);
    assert(at + ENTRY_HEADER_BYTES + length <= body.length, 'append frame entry exceeds its bytes');
    // A copy, so an entry does not pin the whole file buffer.
    const value = new Uint8Array(body.subarray(at + ENTRY_HEADER_BYTES, at + ENTRY_HEADER_BYTES + length));
    entries.push({ offset, epoch, kind, value });
    at += ENTRY_HEADER_BYTES + length;
  }
  assert(at === body.length, 'append frame has trailing bytes');
  return entries;
}

function keepAboveSnapshot(entries: Entry[], snapshot: Snapshot | undefined): LogOp | undefined {
  const start = snapshot?.id.endOffset ?? 0;
  const kept = entries.filter((e) => e.offset >= start);
  return kept.length === 0 ? undefined : { kind: 'append', batches: batchesOf(kept) };
}

function encodeSnapshot(s: Snapshot): Uint8Array {
  const out = Buffer.alloc(12 + s.data.length);
  out.writeBigInt64BE(BigInt(s.id.endOffset), 0);
  out.writeInt32BE(s.id.epoch, 8);
  out.set(s.data, 12);
  return out;
}

function fromOp(op: LogOp): Frame {
  switch (op.kind) {
    case 'append':
      return { a: entriesOf(op.batches).map((e) => ({ o: e.offset, e: e.epoch, k: e.kind, v: Buffer.from(e.value).toString('base64') })) };
    case 'truncate': return { t: op.offset };
    case 'snapshot': return { s: { o: op.snapshot.id.endOffset, e: op.snapshot.id.epoch, r: op.replaceLog } };
  }
}

/** A snapshot frame refers to the snapshot file; an older one than the file holds is skipped. */
function toOp(frame: Frame, snapshot: Snapshot | undefined): LogOp | undefined {
  if ('a' in frame) {
    const entries: Entry[] = frame.a.map((f) => ({ offset: f.o, epoch: f.e, kind: f.k, value: new Uint8Array(Buffer.from(f.v, 'base64')) }));
    const start = snapshot?.id.endOffset ?? 0;
    const kept = entries.filter((e) => e.offset >= start);
    return kept.length === 0 ? undefined : { kind: 'append', batches: batchesOf(kept) };
  }
  if ('t' in frame) return { kind: 'truncate', offset: frame.t };
  if (snapshot !== undefined && frame.s.o === snapshot.id.endOffset) return { kind: 'snapshot', snapshot, replaceLog: frame.s.r };
  return undefined;
}
