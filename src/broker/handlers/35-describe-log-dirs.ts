// DescribeLogDirs (key 35), v0-4. v0 is below Kafka 4.0's floor (KIP-896) but kafka-python's
// describe_log_dirs() still sends it, and it is v1 without the throttle-after-response rule.
// Each log directory of this broker with the size of every partition in it (the sum of its
// segments), or null topics for all. A directory that went offline after an I/O error answers
// KAFKA_STORAGE_ERROR with no topics. v4 adds the volume's total and usable bytes. The metadata
// log is not a partition of the data plane and is not listed (as in Kafka's KRaft mode).
import { ErrorCode, type DescribeLogDirsRequest, type DescribeLogDirsResponse } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { LogDirDescription } from '../services.js';

export const describeLogDirsHandler: HandlerSpec<{ logDirs(): LogDirDescription[] }, 35> = {
  apiKey: 35,
  minVersion: 0,
  maxVersion: 4,
  handle(request: DescribeLogDirsRequest, ctx): DescribeLogDirsResponse {
    const wanted = request.topics === null ? null : new Map(request.topics.map((t) => [t.topic, new Set(t.partitions)]));
    const results = ctx.services.logDirs().map((d) => {
      const byTopic = new Map<string, { partitionIndex: number; partitionSize: bigint; offsetLag: bigint; isFutureKey: boolean }[]>();
      if (!d.offline) {
        for (const p of d.partitions) {
          if (wanted && !wanted.get(p.topic)?.has(p.partition)) continue;
          const list = byTopic.get(p.topic) ?? [];
          list.push({ partitionIndex: p.partition, partitionSize: BigInt(p.sizeBytes), offsetLag: BigInt(p.offsetLag), isFutureKey: false });
          byTopic.set(p.topic, list);
        }
      }
      return {
        errorCode: d.offline ? ErrorCode.KAFKA_STORAGE_ERROR : 0,
        logDir: d.path,
        topics: [...byTopic].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([name, partitions]) => ({ name, partitions: partitions.sort((a, b) => a.partitionIndex - b.partitionIndex) })),
        totalBytes: BigInt(d.totalBytes),
        usableBytes: BigInt(d.usableBytes),
      };
    });
    return { throttleTimeMs: 0, errorCode: 0, results };
  },
};
