// Builders shared by the storage tests: logs on a MemoryFileSystem and batches of keyed records.
import { ManualClock } from '../../src/util/index.js';
import { buildRecordBatchSync, iterateBatches, iterateRecords, RecordBatchView } from '../../src/records/index.js';
import { FileCache, MemoryFileSystem, PartitionLog, logConfig, type LogConfig, type FileSystem } from '../../src/storage/index.js';

export const DIR = '/data/orders-0';

export function batch(n: number, opts: { key?: (i: number) => string | null; value?: (i: number) => string | null; timestamp?: number; producerId?: number; producerEpoch?: number; baseSequence?: number; isTransactional?: boolean } = {}): Buffer {
  const ts = opts.timestamp ?? 1_000;
  return buildRecordBatchSync({
    records: Array.from({ length: n }, (_, i) => {
      const k = opts.key ? opts.key(i) : `k${i}`;
      const v = opts.value ? opts.value(i) : `v${i}`;
      return { key: k === null ? null : Buffer.from(k), value: v === null ? null : Buffer.from(v), timestamp: ts + i };
    }),
    baseOffset: 0, producerId: opts.producerId ?? -1, producerEpoch: opts.producerEpoch ?? -1, baseSequence: opts.baseSequence ?? -1,
    isTransactional: opts.isTransactional ?? false,
  });
}

export function openLog(fs: FileSystem, clock: ManualClock, config: Partial<LogConfig> = {}, o: { recoveryPoint?: number; clean?: boolean; logStartOffset?: number; files?: FileCache } = {}): PartitionLog {
  return PartitionLog.open({
    dir: DIR, files: o.files ?? new FileCache(fs, 64), config: logConfig(config), clock,
    recoveryPoint: o.recoveryPoint ?? 0, logStartOffset: o.logStartOffset ?? 0, hadCleanShutdown: o.clean ?? false,
  });
}

export function setup(config: Partial<LogConfig> = {}) {
  const fs = new MemoryFileSystem();
  const clock = new ManualClock(10_000);
  fs.now = () => clock.nowMs();
  return { fs, clock, log: openLog(fs, clock, config) };
}

/** Every record in the log as [offset, key, value] (uncompressed batches only). */
export function dump(log: PartitionLog): [number, string | null, string | null][] {
  const out: [number, string | null, string | null][] = [];
  // A read returns batches of one segment at most, as in Kafka: loop to the end.
  let offset = log.logStartOffset;
  while (offset < log.logEndOffset) {
    const bytes = log.read(offset, 1 << 30, log.logEndOffset);
    if (bytes.length === 0) break;
    for (const v of iterateBatches(bytes)) {
      // Control batches (transaction markers) are not records a consumer sees.
      if (v.isControl) { offset = v.lastOffset + 1; continue; }
      for (const r of iterateRecords(v, v.bytes().subarray(61))) {
        if (r.offset >= offset) out.push([r.offset, r.key?.toString() ?? null, r.value?.toString() ?? null]);
      }
      offset = v.lastOffset + 1;
    }
  }
  return out;
}

export function batchOffsets(buf: Buffer): [number, number][] {
  return Array.from(iterateBatches(buf), (v: RecordBatchView) => [v.baseOffset, v.lastOffset]);
}
