// A partition's log for replication tests: the storage engine's PartitionLog on a MemoryFileSystem
// behind the LocalLog port, as every broker partition has it (no second log implementation).
import { StorageLog, type ReplicaDeltaPorts, type ReplicaManager, type Scheduler } from '../../src/replication/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { MetadataDelta, MetadataImage, metadataRecord, provenance, type MetadataRecord } from '../../src/metadata/index.js';
import { FileCache, MemoryFileSystem, PartitionLog, logConfig, type LogConfig } from '../../src/storage/index.js';
import { systemClock, type Clock } from '../../src/util/index.js';

export function storageLog(config: Partial<LogConfig> = {}, clock: Clock = systemClock): StorageLog {
  const fs = new MemoryFileSystem();
  return new StorageLog(PartitionLog.open({
    dir: '/data/t-0', files: new FileCache(fs, 16), config: logConfig(config), clock,
    recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false,
  }));
}

/** Every batch in the log, as stored. */
export async function storedBatches(log: StorageLog): Promise<Buffer[]> {
  const { iterateBatches } = await import('../../src/records/index.js');
  const bytes = await log.read(log.logStartOffset, 1 << 30, log.logEndOffset, true);
  return [...iterateBatches(bytes)].map((v) => Buffer.from(v.bytes()));
}

/** A scheduler and clock driven by hand: `advance(ms)` fires what is due, in order. */
export class ManualTime implements Scheduler, Clock {
  now = 1_000_000;
  private timers: { at: number; fn: () => void; cancelled: boolean }[] = [];
  nowMs(): number { return this.now; }
  schedule(delayMs: number, fn: () => void) {
    const t = { at: this.now + delayMs, fn, cancelled: false };
    this.timers.push(t);
    return { cancel: () => { t.cancelled = true; } };
  }
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const next = this.timers.filter((t) => !t.cancelled && t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (next === undefined) break;
      this.now = Math.max(this.now, next.at);
      next.cancelled = true;
      next.fn();
    }
    this.now = until;
  }
}

/** One batch of `n` records v0..v(n-1). */
export const batch = (n: number): Buffer =>
  buildRecordBatchSync({ records: Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`), timestamp: 1_700_000_000_000 + i })) });

/** A broker's registration as the controller writes it, listening on localhost:9092 + id. */
export const registerBrokerRecord = (brokerId: number, brokerEpoch: bigint, fenced: boolean, rack: string | null): MetadataRecord =>
  metadataRecord('RegisterBrokerRecord', {
    brokerId, brokerEpoch, incarnationId: 'ICEiIyQlJicoKSorLC0uLw', fenced, rack,
    endPoints: [{ name: 'PLAINTEXT', host: 'localhost', port: 9092 + brokerId, securityProtocol: 0 }],
    features: [{ name: 'metadata.version', minSupportedVersion: 1, maxSupportedVersion: 25 }],
  }) as MetadataRecord;

/**
 * Replays metadata records into an image, one delta per call, and hands each delta to `rm` as the
 * broker's metadata listener does; `beforeEach` runs before every delta is applied.
 */
export function metadataApplier(rm: ReplicaManager, ports: ReplicaDeltaPorts, beforeEach: () => void = () => {}) {
  let image = MetadataImage.EMPTY;
  return (...records: MetadataRecord[]) => {
    const delta = new MetadataDelta(image);
    for (const r of records) delta.replay(r);
    image = delta.apply(provenance(image.provenance.lastContainedOffset + records.length, 1));
    beforeEach();
    return rm.applyDelta(delta, image, ports);
  };
}
