// A partition's log for replication tests: the storage engine's PartitionLog on a MemoryFileSystem
// behind the LocalLog port, as every broker partition has it (no second log implementation).
import { StorageLog } from '../../src/replication/index.js';
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
  const bytes = await log.read(log.logStartOffset, 1 << 30, log.logEndOffset);
  return [...iterateBatches(bytes)].map((v) => Buffer.from(v.bytes()));
}
