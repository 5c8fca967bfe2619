// Log compaction (cleanup.policy=compact): keeps the latest record per key. One pass over a log:
//   1. the dirty section runs from the cleaner checkpoint to the first uncleanable offset (the
//      active segment, the last stable offset, and segments younger than min.compaction.lag.ms);
//   2. if dirty bytes / cleanable bytes >= min.cleanable.dirty.ratio, build key -> latest offset
//      over the dirty section;
//   3. rewrite every closed segment below the first uncleanable offset into ".cleaned" files,
//      keeping a record when no later offset holds its key, dropping tombstones older than
//      delete.retention.ms and the data of aborted transactions, and a transaction marker once no
//      data of its transaction is left; offsets never change (gaps are normal);
//   4. swap: .cleaned -> .swap, old -> .deleted, .swap -> live. A crash at any point is finished
//      or undone by PartitionLog.open.
// Small consecutive segments are merged while the result stays under segment.bytes.
import { BatchHeaderAt, buildRecordBatch, decompressBatchBody, iterateRecords, RecordBatchView, RecordCursor, type RecordInput } from '../records/index.js';
import type { PartitionLog } from './partition-log.js';
import { LogSegment, CLEANED_SUFFIX, SWAP_SUFFIX } from './segment.js';
import type { AbortedTxn } from './indexes.js';

export interface CleanResult {
  cleaned: boolean;
  reason?: string;
  dirtyRatio: number;
  recordsRead: number;
  recordsKept: number;
  bytesBefore: number;
  bytesAfter: number;
  segmentsBefore: number;
  segmentsAfter: number;
}

/** The first offset the cleaner must not touch. */
export function firstUncleanableOffset(log: PartitionLog, nowMs: number): number {
  let end = Math.min(log.activeSegment.baseOffset, log.lastStableOffset);
  const lag = log.config.minCompactionLagMs;
  if (lag > 0) {
    for (const s of log.segments) {
      if (s.baseOffset >= end) break;
      if (nowMs - s.largestTimestamp() < lag) { end = s.baseOffset; break; }
    }
  }
  return end;
}

function keyString(body: Buffer, c: RecordCursor): string | null {
  return c.keyLength < 0 ? null : body.toString('latin1', c.keyStart, c.keyStart + c.keyLength);
}

function inAborted(aborted: AbortedTxn[], producerId: number, offset: number): boolean {
  return aborted.some((t) => t.producerId === producerId && offset >= t.firstOffset && offset <= t.lastOffset);
}

export async function cleanLog(log: PartitionLog, nowMs: number, opts: { force?: boolean } = {}): Promise<CleanResult> {
  const segmentsBefore = log.segments.length;
  const result: CleanResult = { cleaned: false, dirtyRatio: 0, recordsRead: 0, recordsKept: 0, bytesBefore: 0, bytesAfter: 0, segmentsBefore, segmentsAfter: segmentsBefore };
  if (!log.config.cleanupPolicy.includes('compact')) return { ...result, reason: 'cleanup.policy has no compact' };
  const end = firstUncleanableOffset(log, nowMs);
  const firstDirty = Math.max(log.cleanerCheckpoint, log.logStartOffset);
  const sources = log.segments.filter((s) => s.nextOffset <= end && s.baseOffset < end);
  if (sources.length === 0) return { ...result, reason: 'nothing cleanable' };
  let clean = 0;
  let dirty = 0;
  for (const s of sources) if (s.baseOffset >= firstDirty) dirty += s.size; else clean += s.size;
  result.dirtyRatio = dirty / Math.max(1, clean + dirty);
  result.bytesBefore = clean + dirty;
  if (dirty === 0 || (!opts.force && result.dirtyRatio < log.config.minCleanableDirtyRatio)) {
    return { ...result, reason: `dirty ratio ${result.dirtyRatio.toFixed(3)} below min.cleanable.dirty.ratio` };
  }

  // 2. key -> latest offset over the dirty section.
  const latest = new Map<string, number>();
  for (const s of sources) {
    if (s.nextOffset <= firstDirty) continue;
    for (const v of log.guard(() => [...s.batches()])) {
      if (v.isControl) continue;
      const body = await decompressBatchBody(v);
      const c = new RecordCursor(v, body);
      while (c.next()) {
        const k = keyString(body, c);
        if (k !== null && c.offset >= firstDirty) latest.set(k, c.offset);
      }
    }
  }

  // 3. rewrite into groups of segments.
  const aborted: AbortedTxn[] = [];
  for (const s of sources) aborted.push(...s.txnIndex.aborted);
  const deleteHorizon = nowMs - log.config.deleteRetentionMs;
  const txnDataKept = new Map<number, boolean>();
  const lastBatchOfProducer = new Map<number, number>();
  for (const p of log.producerState.producers.values()) { const b = p.batches.at(-1); if (b) lastBatchOfProducer.set(p.producerId, b.lastOffset); }
  const replacements: { sources: LogSegment[]; cleaned: LogSegment }[] = [];
  let group: LogSegment[] = [];
  let out: LogSegment | null = null;
  const finish = () => { if (out) replacements.push({ sources: group, cleaned: out }); group = []; out = null; };
  for (const s of sources) {
    if (out && (out.size + s.size > log.config.segmentBytes || s.nextOffset - out.baseOffset > 0x7fffffff)) finish();
    if (!out) out = log.guard(() => LogSegment.create(log.dir, s.baseOffset, log.files, log.config, nowMs, CLEANED_SUFFIX));
    group.push(s);
    for (const v of log.guard(() => [...s.batches()])) {
      const kept = await filterBatch(v, latest, aborted, deleteHorizon, txnDataKept, lastBatchOfProducer.get(v.producerId) === v.lastOffset, result);
      if (kept) { const o = out; log.guard(() => o.append(kept, [new RecordBatchView(kept)])); }
    }
  }
  finish();

  // 4. swap, unless the log changed under us (truncation or retention while we awaited).
  for (const r of replacements) {
    const stillThere = r.sources.every((s) => log.segments.includes(s));
    if (!stillThere) {
      for (const x of replacements) { x.cleaned.closeFiles(); for (const p of x.cleaned.existingPaths()) log.fs.remove(p); }
      return { ...result, reason: 'the log changed during cleaning' };
    }
  }
  log.guard(() => {
    for (const r of replacements) {
      r.cleaned.flush();
      r.cleaned.renameTo(SWAP_SUFFIX);
      log.fs.syncDir(log.dir);
      for (const s of r.sources) log.deleteSegmentFiles(s, false);
      r.cleaned.renameTo('');
      log.fs.syncDir(log.dir);
      const i = log.segments.indexOf(r.sources[0]!);
      log.segments.splice(i, r.sources.length, r.cleaned);
    }
  });
  log.cleanerCheckpoint = end;
  result.cleaned = true;
  result.bytesAfter = replacements.reduce((n, r) => n + r.cleaned.size, 0);
  result.segmentsAfter = log.segments.length;
  return result;
}

/** The batch as it should be after cleaning, or null when nothing of it stays. */
async function filterBatch(
  v: RecordBatchView, latest: Map<string, number>, aborted: AbortedTxn[], deleteHorizon: number,
  txnDataKept: Map<number, boolean>, isProducersLastBatch: boolean, result: CleanResult,
): Promise<Buffer | null> {
  if (v.isControl) {
    // A marker stays while any data of its transaction stays, or until the delete horizon.
    const keep = txnDataKept.get(v.producerId) === true || v.maxTimestamp > deleteHorizon;
    txnDataKept.delete(v.producerId);
    return keep ? Buffer.from(v.bytes()) : null;
  }
  const isAborted = v.isTransactional && inAborted(aborted, v.producerId, v.baseOffset);
  const body = await decompressBatchBody(v);
  const records: RecordInput[] = [];
  let total = 0;
  for (const r of iterateRecords(v, body)) {
    total++;
    result.recordsRead++;
    if (isAborted || r.key === null) continue;
    const newest = latest.get(r.key.toString('latin1'));
    if (newest !== undefined && newest > r.offset) continue;
    if (r.value === null && r.timestamp <= deleteHorizon) continue;
    records.push({ key: r.key, value: r.value, offsetDelta: r.offsetDelta, timestamp: r.timestamp, headers: r.headers });
  }
  result.recordsKept += records.length;
  if (v.isTransactional && records.length > 0) txnDataKept.set(v.producerId, true);
  if (records.length === total) return Buffer.from(v.bytes());
  // An idempotent producer's last batch stays, empty, so its sequence state survives.
  if (records.length === 0 && !isProducersLastBatch) return null;
  const built = await buildRecordBatch({
    records, baseOffset: v.baseOffset, compression: records.length === 0 ? 0 : v.compression, timestampType: v.timestampType,
    producerId: v.producerId, producerEpoch: v.producerEpoch, baseSequence: v.baseSequence, partitionLeaderEpoch: v.partitionLeaderEpoch,
    isTransactional: v.isTransactional, baseTimestamp: v.baseTimestamp,
  });
  // Keep the original offset range and max timestamp: producer state and time lookups rely on them.
  const out = new RecordBatchView(built);
  built.writeInt32BE(v.lastOffsetDelta, BatchHeaderAt.LastOffsetDelta);
  out.maxTimestamp = v.maxTimestamp;
  return built;
}

