// File-backed stores with node:fs. The quorum-state file is replaced atomically (write a temp file,
// fsync it, rename it over the old one, fsync the directory). The log is a simple file of
// length-prefixed, CRC32C-checked JSON frames, one per LogOp; a torn or corrupt tail is ignored on
// load. Snapshots are separate files written the same atomic way. This format is a stopgap: the log
// moves onto the storage engine (src/storage) once that lands.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32c } from '../../records/index.js';
import type { Entry, LogOp, QuorumState, Snapshot } from '../core/types.js';
import { MemoryLogStore } from './memory.js';
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
  constructor(private readonly dir: string) { mkdirSync(dir, { recursive: true }); }

  read(): QuorumState | undefined {
    const path = join(this.dir, 'quorum-state');
    if (!existsSync(path)) return undefined;
    const json = JSON.parse(readFileSync(path, 'utf8')) as { leaderEpoch: number; leaderId: number; votedId: number };
    return {
      epoch: json.leaderEpoch,
      ...(json.leaderId >= 0 ? { leaderId: json.leaderId } : {}),
      ...(json.votedId >= 0 ? { votedId: json.votedId } : {}),
    };
  }

  write(state: QuorumState): void {
    // Kafka's field names, with -1 for "none".
    const json = { leaderEpoch: state.epoch, leaderId: state.leaderId ?? -1, votedId: state.votedId ?? -1, data_version: 0 };
    writeFileAtomic(this.dir, 'quorum-state', new TextEncoder().encode(JSON.stringify(json)));
  }
}

interface FrameEntry { o: number; e: number; k: 'data' | 'control'; v: string }
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
      const op = toOp(JSON.parse(body.toString('utf8')) as Frame, snapshot);
      if (op !== undefined) mem.apply([op]);
      at += 8 + length;
    }
    mem.sync();
    return mem.load();
  }

  apply(ops: readonly LogOp[]): void {
    for (const op of ops) {
      if (op.kind === 'snapshot') writeFileAtomic(this.dir, 'snapshot', encodeSnapshot(op.snapshot));
      this.writeFrame(fromOp(op));
    }
  }

  sync(): void { fsyncSync(this.fd); }
  close(): void { closeSync(this.fd); }

  private writeFrame(frame: Frame): void {
    const body = Buffer.from(JSON.stringify(frame), 'utf8');
    const header = Buffer.alloc(8);
    header.writeUInt32BE(body.length, 0);
    header.writeUInt32BE(crc32c(body), 4);
    writeSync(this.fd, Buffer.concat([header, body]));
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
      return { a: op.entries.map((e) => ({ o: e.offset, e: e.epoch, k: e.kind, v: Buffer.from(e.value).toString('base64') })) };
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
    return kept.length === 0 ? undefined : { kind: 'append', entries: kept };
  }
  if ('t' in frame) return { kind: 'truncate', offset: frame.t };
  if (snapshot !== undefined && frame.s.o === snapshot.id.endOffset) return { kind: 'snapshot', snapshot, replaceLog: frame.s.r };
  return undefined;
}
