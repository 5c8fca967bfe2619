// Builds RecordBatch v2 bytes: computes lengths, deltas, max timestamp and CRC. Used by tests, the
// client and internal topics; the produce path never rebuilds what a client sent.
import { assert } from '../util/index.js';
import {
  ATTR_CONTROL, ATTR_TIMESTAMP_TYPE, ATTR_TRANSACTIONAL, Compression, LOG_OVERHEAD_BYTES, Off,
  RECORD_BATCH_HEADER_BYTES, RecordBatchView, TimestampType, writeInt64,
} from './batch.js';
import { compress } from './compression.js';
import { sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from './varint.js';

export interface RecordInput {
  key?: Buffer | null;
  value?: Buffer | null;
  headers?: { key: string; value: Buffer | null }[];
  /** Defaults to the batch's base timestamp. */
  timestamp?: number;
  /** Defaults to the record's index; must increase strictly across the batch. */
  offsetDelta?: number;
}

export interface BuildBatchOptions {
  records: RecordInput[];
  baseOffset?: number;
  compression?: Compression;
  timestampType?: TimestampType;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  partitionLeaderEpoch?: number;
  isTransactional?: boolean;
  isControl?: boolean;
  /** Defaults to the first record's timestamp, else the current time (-1 for an empty batch). */
  baseTimestamp?: number;
}

/** Kafka's RecordBatch.NO_TIMESTAMP. */
export const NO_TIMESTAMP = -1;

interface Plan {
  baseTimestamp: number;
  maxTimestamp: number;
  lastOffsetDelta: number;
  bodyBytes: number;
  headerKeys: Buffer[][];
}

function plan(opts: BuildBatchOptions): Plan {
  const records = opts.records;
  const first = records[0];
  const baseTimestamp = opts.baseTimestamp ?? first?.timestamp ?? (first ? Date.now() : NO_TIMESTAMP);
  let maxTimestamp = NO_TIMESTAMP;
  let lastOffsetDelta = -1;
  let bodyBytes = 0;
  const headerKeys: Buffer[][] = [];
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const ts = r.timestamp ?? baseTimestamp;
    const offsetDelta = r.offsetDelta ?? i;
    assert(offsetDelta > lastOffsetDelta && offsetDelta <= 0x7fffffff, `offsetDelta ${offsetDelta} of record ${i} must increase`);
    lastOffsetDelta = offsetDelta;
    if (ts > maxTimestamp) maxTimestamp = ts;
    const keys = (r.headers ?? []).map((h) => Buffer.from(h.key, 'utf8'));
    headerKeys.push(keys);
    const size = recordBodyBytes(r, ts - baseTimestamp, offsetDelta, keys);
    bodyBytes += sizeOfVarint(size) + size;
  }
  return { baseTimestamp, maxTimestamp, lastOffsetDelta, bodyBytes, headerKeys };
}

function bytesOf(b: Buffer | null | undefined): number {
  return b == null ? sizeOfVarint(-1) : sizeOfVarint(b.length) + b.length;
}

function recordBodyBytes(r: RecordInput, timestampDelta: number, offsetDelta: number, keys: Buffer[]): number {
  let n = 1 + sizeOfVarlong(timestampDelta) + sizeOfVarint(offsetDelta) + bytesOf(r.key) + bytesOf(r.value);
  const headers = r.headers ?? [];
  n += sizeOfVarint(headers.length);
  for (let i = 0; i < headers.length; i++) n += bytesOf(keys[i]) + bytesOf(headers[i]!.value);
  return n;
}

function writeBytes(buf: Buffer, at: number, b: Buffer | null | undefined): number {
  if (b == null) return writeVarint(buf, at, -1);
  at = writeVarint(buf, at, b.length);
  return at + b.copy(buf, at);
}

function writeBody(opts: BuildBatchOptions, p: Plan, buf: Buffer, at: number): number {
  const records = opts.records;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const timestampDelta = (r.timestamp ?? p.baseTimestamp) - p.baseTimestamp;
    const offsetDelta = r.offsetDelta ?? i;
    const keys = p.headerKeys[i]!;
    at = writeVarint(buf, at, recordBodyBytes(r, timestampDelta, offsetDelta, keys));
    buf[at++] = 0; // record attributes: unused, always 0
    at = writeVarlong(buf, at, timestampDelta);
    at = writeVarint(buf, at, offsetDelta);
    at = writeBytes(buf, at, r.key);
    at = writeBytes(buf, at, r.value);
    const headers = r.headers ?? [];
    at = writeVarint(buf, at, headers.length);
    for (let h = 0; h < headers.length; h++) {
      at = writeBytes(buf, at, keys[h]);
      at = writeBytes(buf, at, headers[h]!.value);
    }
  }
  return at;
}

function attributesOf(opts: BuildBatchOptions): number {
  let a = opts.compression ?? Compression.None;
  if (opts.timestampType === TimestampType.LogAppendTime) a |= ATTR_TIMESTAMP_TYPE;
  if (opts.isTransactional) a |= ATTR_TRANSACTIONAL;
  if (opts.isControl) a |= ATTR_CONTROL;
  return a;
}

function writeHeader(buf: Buffer, opts: BuildBatchOptions, p: Plan): void {
  writeInt64(buf, Off.BaseOffset, opts.baseOffset ?? 0, 'baseOffset');
  buf.writeInt32BE(buf.length - LOG_OVERHEAD_BYTES, Off.BatchLength);
  buf.writeInt32BE(opts.partitionLeaderEpoch ?? -1, Off.PartitionLeaderEpoch);
  buf.writeInt8(2, Off.Magic);
  buf.writeInt16BE(attributesOf(opts), Off.Attributes);
  buf.writeInt32BE(p.lastOffsetDelta, Off.LastOffsetDelta);
  writeInt64(buf, Off.BaseTimestamp, p.baseTimestamp, 'baseTimestamp');
  writeInt64(buf, Off.MaxTimestamp, p.maxTimestamp, 'maxTimestamp');
  writeInt64(buf, Off.ProducerId, opts.producerId ?? -1, 'producerId');
  buf.writeInt16BE(opts.producerEpoch ?? -1, Off.ProducerEpoch);
  buf.writeInt32BE(opts.baseSequence ?? -1, Off.BaseSequence);
  buf.writeInt32BE(opts.records.length, Off.RecordCount);
  new RecordBatchView(buf).updateCrc();
}

/** Builds one uncompressed batch synchronously (the `compression` option must be None or absent). */
export function buildRecordBatchSync(opts: BuildBatchOptions): Buffer {
  assert((opts.compression ?? Compression.None) === Compression.None, 'buildRecordBatchSync only builds uncompressed batches');
  const p = plan(opts);
  const buf = Buffer.alloc(RECORD_BATCH_HEADER_BYTES + p.bodyBytes);
  const end = writeBody(opts, p, buf, RECORD_BATCH_HEADER_BYTES);
  assert(end === buf.length, `record sizes were planned as ${p.bodyBytes} bytes but ${end - RECORD_BATCH_HEADER_BYTES} were written`);
  writeHeader(buf, opts, p);
  return buf;
}

/** Builds one batch with any codec. */
export async function buildRecordBatch(opts: BuildBatchOptions): Promise<Buffer> {
  const codec = opts.compression ?? Compression.None;
  if (codec === Compression.None) return buildRecordBatchSync(opts);
  const p = plan(opts);
  const body = Buffer.alloc(p.bodyBytes);
  const end = writeBody(opts, p, body, 0);
  assert(end === body.length, 'record sizes were planned wrong');
  const compressed = await compress(codec, body);
  const buf = Buffer.alloc(RECORD_BATCH_HEADER_BYTES + compressed.length);
  compressed.copy(buf, RECORD_BATCH_HEADER_BYTES);
  writeHeader(buf, opts, p);
  return buf;
}
