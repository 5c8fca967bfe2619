// MirrorMaker 2's record formats, byte for byte, so tools built on them (RemoteClusterUtils'
// offset translation, lag dashboards, kafka-console-consumer's MM2 formatters) read a Logline
// mirror's topics. They are Kafka protocol structs: STRING is an int16 length and UTF-8 bytes,
// integers are big-endian.
//   OffsetSync  key: topic STRING, partition INT32     value: upstreamOffset INT64, offset INT64
//   Checkpoint  key: group STRING, topic STRING, partition INT32
//               value: version INT16 (0), upstreamOffset INT64, offset INT64, metadata STRING
//   Heartbeat   key: sourceClusterAlias STRING, targetClusterAlias STRING
//               value: version INT16 (0), timestamp INT64
// and Connect's source offsets (the `mm2-offsets.<source>.internal` topic): key
// `["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"orders"}]`, value `{"offset":41}`
// (the last offset mirrored, as MirrorSourceTask stores it).

export interface OffsetSync { topic: string; partition: number; upstreamOffset: number; downstreamOffset: number }
export interface Checkpoint { group: string; topic: string; partition: number; upstreamOffset: number; downstreamOffset: number; metadata: string }
export interface Heartbeat { sourceClusterAlias: string; targetClusterAlias: string; timestamp: number }
export interface SourceOffset { cluster: string; topic: string; partition: number; offset: number }

export class FormatError extends Error { override name = 'FormatError'; }

class Writer {
  private readonly parts: Buffer[] = [];
  string(s: string): this {
    const b = Buffer.from(s, 'utf8');
    if (b.length > 0x7fff) throw new FormatError(`string of ${b.length} bytes is too long for a STRING`);
    const len = Buffer.alloc(2);
    len.writeInt16BE(b.length);
    this.parts.push(len, b);
    return this;
  }
  int16(n: number): this { const b = Buffer.alloc(2); b.writeInt16BE(n); this.parts.push(b); return this; }
  int32(n: number): this { const b = Buffer.alloc(4); b.writeInt32BE(n); this.parts.push(b); return this; }
  int64(n: number): this { const b = Buffer.alloc(8); b.writeBigInt64BE(BigInt(n)); this.parts.push(b); return this; }
  done(): Buffer { return Buffer.concat(this.parts); }
}

class Reader {
  private pos = 0;
  constructor(private readonly buf: Buffer, private readonly what: string) {}
  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new FormatError(`${this.what}: ${n} bytes needed at ${this.pos} of ${this.buf.length}`);
  }
  string(): string {
    this.need(2);
    const len = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    if (len < 0) throw new FormatError(`${this.what}: a null STRING`);
    this.need(len);
    const s = this.buf.toString('utf8', this.pos, this.pos + len);
    this.pos += len;
    return s;
  }
  int16(): number { this.need(2); const v = this.buf.readInt16BE(this.pos); this.pos += 2; return v; }
  int32(): number { this.need(4); const v = this.buf.readInt32BE(this.pos); this.pos += 4; return v; }
  int64(): number {
    this.need(8);
    const v = this.buf.readBigInt64BE(this.pos);
    this.pos += 8;
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) throw new FormatError(`${this.what}: ${v} is beyond a safe integer`);
    return Number(v);
  }
}

function need(buf: Buffer | null, what: string): Buffer {
  if (buf === null) throw new FormatError(`${what}: null`);
  return buf;
}

export function encodeOffsetSync(s: OffsetSync): { key: Buffer; value: Buffer } {
  return {
    key: new Writer().string(s.topic).int32(s.partition).done(),
    value: new Writer().int64(s.upstreamOffset).int64(s.downstreamOffset).done(),
  };
}

export function decodeOffsetSync(key: Buffer | null, value: Buffer | null): OffsetSync {
  const k = new Reader(need(key, 'offset sync key'), 'offset sync key');
  const v = new Reader(need(value, 'offset sync value'), 'offset sync value');
  return { topic: k.string(), partition: k.int32(), upstreamOffset: v.int64(), downstreamOffset: v.int64() };
}

export function encodeCheckpoint(c: Checkpoint): { key: Buffer; value: Buffer } {
  return {
    key: new Writer().string(c.group).string(c.topic).int32(c.partition).done(),
    value: new Writer().int16(0).int64(c.upstreamOffset).int64(c.downstreamOffset).string(c.metadata).done(),
  };
}

export function decodeCheckpoint(key: Buffer | null, value: Buffer | null): Checkpoint {
  const k = new Reader(need(key, 'checkpoint key'), 'checkpoint key');
  const v = new Reader(need(value, 'checkpoint value'), 'checkpoint value');
  const group = k.string();
  const topic = k.string();
  const partition = k.int32();
  const version = v.int16();
  if (version !== 0) throw new FormatError(`checkpoint value version ${version} (only 0 exists)`);
  return { group, topic, partition, upstreamOffset: v.int64(), downstreamOffset: v.int64(), metadata: v.string() };
}

export function encodeHeartbeat(h: Heartbeat): { key: Buffer; value: Buffer } {
  return {
    key: new Writer().string(h.sourceClusterAlias).string(h.targetClusterAlias).done(),
    value: new Writer().int16(0).int64(h.timestamp).done(),
  };
}

export function decodeHeartbeat(key: Buffer | null, value: Buffer | null): Heartbeat {
  const k = new Reader(need(key, 'heartbeat key'), 'heartbeat key');
  const v = new Reader(need(value, 'heartbeat value'), 'heartbeat value');
  const sourceClusterAlias = k.string();
  const targetClusterAlias = k.string();
  const version = v.int16();
  if (version !== 0) throw new FormatError(`heartbeat value version ${version} (only 0 exists)`);
  return { sourceClusterAlias, targetClusterAlias, timestamp: v.int64() };
}

/** The connector name in Connect's offset keys (MirrorMaker 2's dedicated mode names it so). */
export const SOURCE_CONNECTOR = 'MirrorSourceConnector';

export function encodeSourceOffset(o: SourceOffset): { key: Buffer; value: Buffer } {
  // Connect's JsonConverter writes map keys sorted: cluster, partition, topic.
  return {
    key: Buffer.from(JSON.stringify([SOURCE_CONNECTOR, { cluster: o.cluster, partition: o.partition, topic: o.topic }])),
    value: Buffer.from(JSON.stringify({ offset: o.offset })),
  };
}

/** A source offset record, or null for another connector's, a tombstone or bytes that are not one. */
export function decodeSourceOffset(key: Buffer | null, value: Buffer | null): SourceOffset | null {
  if (key === null || value === null) return null;
  try {
    const k = JSON.parse(key.toString('utf8'));
    const v = JSON.parse(value.toString('utf8'));
    if (!Array.isArray(k) || k[0] !== SOURCE_CONNECTOR || typeof k[1] !== 'object' || k[1] === null) return null;
    const { cluster, topic, partition } = k[1];
    if (typeof cluster !== 'string' || typeof topic !== 'string' || !Number.isInteger(partition) || !Number.isSafeInteger(v?.offset)) return null;
    return { cluster, topic, partition, offset: v.offset };
  } catch {
    return null;
  }
}
