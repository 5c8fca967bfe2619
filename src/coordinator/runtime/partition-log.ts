// The CoordinatorLog port over the broker's replica manager: appends go through the same produce
// path as clients' (acks=all, so a write is answered once the high watermark passes it); loading
// reads the partition's log to its end, as Kafka's coordinator loader does. A shard loads only on
// the partition's leader, whose log is never truncated while it leads, and what the previous leader
// acknowledged may still sit above this one's high watermark (a follower learns the high watermark
// a fetch late): loading only to the high watermark lost a transactional offset commit acknowledged
// just before a failover, and the group resumed from older offsets (duplicates downstream). Whatever backs the partitions (memory today,
// the storage engine later) backs the coordinator too.
import type { ReplicaManager } from '../../replication/index.js';
import { ErrorCode } from '../../protocol/index.js';
import { partitionKey } from '../../util/index.js';
import type { CoordinatorLog } from './runtime.js';

export function replicaManagerLog(rm: ReplicaManager, topic: string, commitTimeoutMs: number): CoordinatorLog {
  return {
    isLeader: (partition) => rm.partition(topic, partition)?.isLeader ?? false,
    leaderEpoch: (partition) => rm.partition(topic, partition)?.leaderEpoch ?? -1,
    append: async (partition, batch) => {
      const out = await rm.produce(-1, commitTimeoutMs, [{ topic, partition, records: batch }]);
      return out.get(partitionKey(topic, partition))?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR;
    },
    read: async (partition, offset, maxBytes) => {
      const p = rm.partition(topic, partition);
      if (!p) return { bytes: Buffer.alloc(0), endOffset: offset };
      const end = p.log.logEndOffset;
      if (offset >= end) return { bytes: Buffer.alloc(0), endOffset: end };
      return { bytes: await p.log.read(offset, maxBytes, end, true), endOffset: end };
    },
    logStartOffset: (partition) => rm.partition(topic, partition)?.log.logStartOffset ?? 0,
  };
}
