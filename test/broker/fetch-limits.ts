// What a Fetch answer may hold (KIP-74), checked from the outside: the request's limits against the
// record bytes of the response, as a client would see them. Shared by the property test and the
// tests that watch real clients' fetches.
import { LOG_OVERHEAD_BYTES, BatchHeaderAt } from '../../src/records/index.js';

interface FetchRequestView {
  maxBytes: number;
  topics: { topic?: string; topicId?: string; partitions: { partition: number; partitionMaxBytes: number }[] }[];
}
interface FetchResponseView {
  responses: { topic?: string; topicId?: string; partitions: { partitionIndex: number; records: Buffer | null }[] }[];
}

/** Size of the first batch in `records` (the whole of it, length field included). */
export function firstBatchBytes(records: Buffer): number {
  return records.length < LOG_OVERHEAD_BYTES ? records.length : records.readInt32BE(BatchHeaderAt.BatchLength) + LOG_OVERHEAD_BYTES;
}

/**
 * The ways a response breaks the request's limits; empty when it keeps them. The rule: the record
 * bytes of the answer stay within `max_bytes` and each partition's within its `partition_max_bytes`,
 * except that the first partition with data (in the order the answer lists them, which is the order
 * they were read for one topic) may hold a single batch larger than either, so a consumer always
 * makes progress; after such a batch the answer has room only for what `max_bytes` has left.
 * `partitionMaxBytes` of a partition a fetch session remembers but the request did not name is
 * taken from `sessionLimits` when given.
 */
export function fetchLimitViolations(request: FetchRequestView, response: FetchResponseView, sessionLimits?: Map<string, number>): string[] {
  const limits = new Map(sessionLimits ?? []);
  for (const t of request.topics) for (const p of t.partitions) limits.set(`${t.topic || t.topicId}/${p.partition}`, p.partitionMaxBytes);
  const out: string[] = [];
  let total = 0;
  let seenData = false;
  for (const t of response.responses) {
    for (const p of t.partitions) {
      const name = `${t.topic || t.topicId}/${p.partitionIndex}`;
      const bytes = p.records?.length ?? 0;
      if (bytes === 0) continue;
      const partitionMax = limits.get(name);
      if (partitionMax === undefined) {
        out.push(`${name}: answered with ${bytes} bytes but not asked for`);
        continue;
      }
      const left = Math.max(0, request.maxBytes - total);
      const allowed = Math.min(partitionMax, left);
      const wholeFirstBatch = !seenData && bytes === firstBatchBytes(p.records!);
      if (bytes > allowed && !wholeFirstBatch) {
        out.push(`${name}: ${bytes} bytes with partition_max_bytes ${partitionMax} and ${left} of max_bytes ${request.maxBytes} left`);
      }
      total += bytes;
      seenData = true;
    }
  }
  return out;
}

/**
 * Checks a stream of Fetch requests and answers per client (or per follower): a fetch session's
 * incremental fetch names only the partitions that changed, and the others keep the
 * partition_max_bytes they were last given.
 */
export class FetchLimitChecker {
  private readonly sessions = new Map<string, Map<string, number>>();

  check(stream: string, request: FetchRequestView, response: FetchResponseView): string[] {
    const limits = this.sessions.get(stream) ?? new Map<string, number>();
    this.sessions.set(stream, limits);
    const out = fetchLimitViolations(request, response, limits);
    for (const t of request.topics) for (const p of t.partitions) limits.set(`${t.topic || t.topicId}/${p.partition}`, p.partitionMaxBytes);
    return out;
  }
}
