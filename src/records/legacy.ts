// Legacy message sets (magic 0 and 1, Kafka's format before KIP-98) and their up-conversion to
// one RecordBatch v2, as Kafka's LogValidator does on append for clients that send Produce v0-v2
// without asking ApiVersions. Layout of one entry (Kafka's LegacyRecord behind LOG_OVERHEAD):
//
//   0 offset int64 | 8 size int32 | 12 crc uint32 | 16 magic int8 | 17 attributes int8
//   [18 timestamp int64, magic 1 only] | keyLength int32 | key | valueLength int32 | value
//
// The CRC is CRC-32 (IEEE) over magic..end. A compressed entry is a "wrapper": its value is a
// compressed message set of inner entries of the same magic. Kafka's rules kept here: a compressed
// wrapper is alone in its set; all entries share the first one's magic; inner entries are not
// compressed and carry valid CRCs; magic 0 has no timestamp (-1); an inner entry of a magic-1
// wrapper with the LogAppendTime attribute takes the wrapper's timestamp. Inner offsets are ignored
// (the broker assigns offsets), as Kafka does when it rebuilds the batch.
import * as zlib from 'node:zlib';
import { assert, limits } from '../util/index.js';
import { Compression, readInt64 } from './batch.js';
import { buildRecordBatch, type RecordInput } from './builder.js';
import { decompress } from './compression.js';
import { RecordsError } from './errors.js';

/** offset + size, before each entry. */
const LEGACY_LOG_OVERHEAD_BYTES = 12;
/** crc + magic + attributes + key length + value length. */
export const LEGACY_RECORD_OVERHEAD_V0 = 14;
/** ... plus the timestamp. */
export const LEGACY_RECORD_OVERHEAD_V1 = 22;
const MAGIC_AT = 16;
const ATTR_CODEC_MASK = 0x07;
const ATTR_LOG_APPEND_TIME = 0x08;
const TIMESTAMP_ABS_MAX = 2 ** 51;

/** Whether produced bytes are a legacy message set: magic sits at byte 16 in both formats. */
export function isLegacyMessageSet(records: Buffer): boolean {
  return records.length > MAGIC_AT && records[MAGIC_AT]! <= 1;
}

// ------------------------------------------------------------------------------- CRC-32 (IEEE)

let crcTable: Int32Array | null = null;

/** CRC-32 as zip and Kafka's legacy messages use it; node:zlib's when this Node has it (20.15+). */
export function crc32(data: Uint8Array): number {
  const native = (zlib as { crc32?: (d: Uint8Array) => number }).crc32;
  if (native) return native(data) >>> 0;
  if (!crcTable) {
    crcTable = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c;
    }
  }
  let crc = -1;
  for (let i = 0; i < data.length; i++) crc = crcTable[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

// ------------------------------------------------------------------------------ one entry

interface LegacyEntry {
  magic: number;
  attributes: number;
  /** -1 for magic 0. */
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  /** Where the next entry starts. */
  end: number;
}

function corrupt(message: string): never {
  throw new RecordsError('CORRUPT_MESSAGE', message);
}

/** Reads a nullable int32-length byte field that must end by `end`; returns it and where it ends. */
function readBytesField(buf: Buffer, at: number, end: number, what: string): [Buffer | null, number] {
  if (end - at < 4) corrupt(`legacy message ends inside its ${what} length`);
  const len = buf.readInt32BE(at);
  at += 4;
  if (len === -1) return [null, at];
  if (len < 0 || len > end - at) corrupt(`legacy message ${what} length ${len} overruns the ${end - at} bytes left`);
  return [buf.subarray(at, at + len), at + len];
}

/** One entry at `at`, bounds- and CRC-checked. `where` names it in errors. */
function readEntry(buf: Buffer, at: number, where: string): LegacyEntry {
  const remaining = buf.length - at;
  if (remaining < LEGACY_LOG_OVERHEAD_BYTES + LEGACY_RECORD_OVERHEAD_V0) {
    corrupt(`${remaining} trailing bytes at ${where} are not a message`);
  }
  const size = buf.readInt32BE(at + 8);
  if (size < LEGACY_RECORD_OVERHEAD_V0) corrupt(`message size ${size} at ${where} is below the minimum ${LEGACY_RECORD_OVERHEAD_V0}`);
  if (size > remaining - LEGACY_LOG_OVERHEAD_BYTES) {
    corrupt(`message at ${where} claims ${size} bytes but only ${remaining - LEGACY_LOG_OVERHEAD_BYTES} remain`);
  }
  const end = at + LEGACY_LOG_OVERHEAD_BYTES + size;
  const magic = buf.readInt8(at + MAGIC_AT);
  if (magic === 2) throw new RecordsError('INVALID_RECORD', `a RecordBatch v2 at ${where} is mixed into a legacy message set`);
  if (magic !== 0 && magic !== 1) corrupt(`invalid magic ${magic} at ${where}`);
  if (magic === 1 && size < LEGACY_RECORD_OVERHEAD_V1) corrupt(`message size ${size} at ${where} is below the magic 1 minimum ${LEGACY_RECORD_OVERHEAD_V1}`);
  const stored = buf.readUInt32BE(at + 12);
  const computed = crc32(buf.subarray(at + MAGIC_AT, end));
  if (stored !== computed) {
    corrupt(`message CRC mismatch at ${where}: stored 0x${stored.toString(16)}, computed 0x${computed.toString(16)}`);
  }
  const attributes = buf[at + 17]!;
  let pos = at + 18;
  let timestamp = -1;
  if (magic === 1) {
    timestamp = readInt64(buf, pos, 'message timestamp');
    // The v2 builder writes timestamps as deltas below 2^52; real ones (~2^40) are far inside.
    if (Math.abs(timestamp) >= TIMESTAMP_ABS_MAX) throw new RecordsError('INVALID_RECORD', `message timestamp ${timestamp} at ${where} is out of range`);
    pos += 8;
  }
  const [key, afterKey] = readBytesField(buf, pos, end, 'key');
  const [value, afterValue] = readBytesField(buf, afterKey, end, 'value');
  if (afterValue !== end) corrupt(`message at ${where} has ${end - afterValue} bytes after its value`);
  return { magic, attributes, timestamp, key, value, end };
}

// -------------------------------------------------------------------- lz4 and KAFKA-3160

const PRIME32_1 = 0x9e3779b1;
const PRIME32_2 = 0x85ebca77;
const PRIME32_3 = 0xc2b2ae3d;
const PRIME32_4 = 0x27d4eb2f;
const PRIME32_5 = 0x165667b1;
const rotl32 = (x: number, r: number) => (x << r) | (x >>> (32 - r));

/** xxHash32 with seed 0 of fewer than 16 bytes (an LZ4 frame descriptor is at most 14). */
export function xxh32Short(data: Uint8Array): number {
  assert(data.length < 16, 'xxh32Short takes fewer than 16 bytes');
  let h = (PRIME32_5 + data.length) | 0;
  let i = 0;
  for (; i + 4 <= data.length; i += 4) {
    const word = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    h = Math.imul(rotl32((h + Math.imul(word, PRIME32_3)) | 0, 17), PRIME32_4);
  }
  for (; i < data.length; i++) h = Math.imul(rotl32((h + Math.imul(data[i]!, PRIME32_5)) | 0, 11), PRIME32_1);
  h = Math.imul(h ^ (h >>> 15), PRIME32_2);
  h = Math.imul(h ^ (h >>> 13), PRIME32_3);
  return (h ^ (h >>> 16)) >>> 0;
}

const LZ4_FRAME_MAGIC = 0x184d2204;

/**
 * Magic-0 lz4 wrappers carry a wrong frame-descriptor checksum (KAFKA-3160: old Kafka clients and
 * librdkafka hashed the frame magic too), which Kafka ignores for magic 0. lz4 libraries check it,
 * so a copy of the data gets the right checksum. Anything else is returned as it is.
 */
export function fixLegacyLz4HeaderChecksum(data: Buffer): Buffer {
  if (data.length < 7 || data.readUInt32LE(0) !== LZ4_FRAME_MAGIC) return data;
  const flg = data[4]!;
  const descriptorBytes = 2 + (flg & 0x08 ? 8 : 0) + (flg & 0x01 ? 4 : 0);
  const hcAt = 4 + descriptorBytes;
  if (data.length <= hcAt) return data;
  const hc = (xxh32Short(data.subarray(4, hcAt)) >>> 8) & 0xff;
  if (data[hcAt] === hc) return data;
  const fixed = Buffer.from(data);
  fixed[hcAt] = hc;
  return fixed;
}

// --------------------------------------------------------------------------- the message set

export interface LegacyMessageSet {
  /** 0 or 1: every entry's magic. */
  magic: number;
  /** The wrapper's codec, or None for a set of plain messages. */
  compression: Compression;
  /** In order, with timestamps as Kafka reads them (-1 for magic 0). */
  records: RecordInput[];
}

/**
 * Parses a produced legacy message set: plain messages, or one compressed wrapper whose inner
 * messages are inflated (at most `maxBytes`). Throws RecordsError: CORRUPT_MESSAGE for bad bytes
 * and CRCs, INVALID_RECORD for sets Kafka refuses, UNSUPPORTED_COMPRESSION_TYPE for codecs above lz4.
 */
export async function readLegacyMessageSet(buf: Buffer, maxBytes: number = limits.decompressedBytesMax): Promise<LegacyMessageSet> {
  if (buf.length === 0) throw new RecordsError('INVALID_RECORD', 'an empty message set');
  const entries: LegacyEntry[] = [];
  for (let at = 0; at < buf.length;) {
    const e = readEntry(buf, at, `byte ${at}`);
    if (entries.length > 0 && e.magic !== entries[0]!.magic) {
      throw new RecordsError('INVALID_RECORD', `message magic ${e.magic} at byte ${at} differs from the first message's ${entries[0]!.magic}`);
    }
    if (entries.length >= limits.recordBatchRecordsMax) throw new RecordsError('INVALID_RECORD', `more than ${limits.recordBatchRecordsMax} messages`);
    entries.push(e);
    at = e.end;
  }
  const first = entries[0]!;
  const codec = first.attributes & ATTR_CODEC_MASK;
  const compressed = entries.some((e) => (e.attributes & ATTR_CODEC_MASK) !== Compression.None);
  if (!compressed) {
    return { magic: first.magic, compression: Compression.None, records: entries.map((e) => ({ key: e.key, value: e.value, timestamp: e.timestamp })) };
  }
  if (entries.length > 1) throw new RecordsError('INVALID_RECORD', `a compressed wrapper message must be alone in its set, not one of ${entries.length}`);
  return { magic: first.magic, compression: codec, records: await readWrapper(first, maxBytes) };
}

async function readWrapper(wrapper: LegacyEntry, maxBytes: number): Promise<RecordInput[]> {
  const codec = wrapper.attributes & ATTR_CODEC_MASK;
  if (codec > Compression.Lz4) throw new RecordsError('UNSUPPORTED_COMPRESSION_TYPE', `compression codec ${codec} is not valid with message format v${wrapper.magic}`);
  if (wrapper.value === null) throw new RecordsError('INVALID_RECORD', 'a compressed wrapper message has a null value');
  const data = codec === Compression.Lz4 && wrapper.magic === 0 ? fixLegacyLz4HeaderChecksum(wrapper.value) : wrapper.value;
  const inner = await decompress(codec, data, maxBytes);
  const appendTime = wrapper.magic === 1 && (wrapper.attributes & ATTR_LOG_APPEND_TIME) !== 0;
  const records: RecordInput[] = [];
  for (let at = 0; at < inner.length;) {
    const e = readEntry(inner, at, `inner byte ${at}`);
    if (e.magic !== wrapper.magic) throw new RecordsError('INVALID_RECORD', `inner message magic ${e.magic} differs from its wrapper's ${wrapper.magic}`);
    if ((e.attributes & ATTR_CODEC_MASK) !== Compression.None) throw new RecordsError('INVALID_RECORD', 'an inner message of a compressed wrapper is itself compressed');
    if (records.length >= limits.recordBatchRecordsMax) throw new RecordsError('INVALID_RECORD', `more than ${limits.recordBatchRecordsMax} inner messages`);
    records.push({ key: e.key, value: e.value, timestamp: appendTime ? wrapper.timestamp : e.timestamp });
    at = e.end;
  }
  if (records.length === 0) throw new RecordsError('INVALID_RECORD', 'a compressed wrapper message holds no messages');
  return records;
}

/**
 * Up-converts a produced legacy message set to one RecordBatch v2 (base offset 0, CreateTime, no
 * producer id) compressed with the wrapper's codec, as Kafka stores it when the topic's
 * compression.type is `producer`. The log assigns offsets and stamps LogAppendTime as for any batch.
 */
export async function convertLegacyMessageSet(buf: Buffer, maxBytes: number = limits.decompressedBytesMax): Promise<Buffer> {
  const set = await readLegacyMessageSet(buf, maxBytes);
  return buildRecordBatch({ records: set.records, compression: set.compression });
}
