// Kafka's BrokerTopicStats (bytes and messages in, bytes out, per topic) and the ReplicaManager's
// ISR shrink/expand meters: plain counters bumped on the produce and fetch paths, once per partition
// per request (never per record), and read when /metrics is scraped.

export interface TopicCounters {
  /** Record bytes appended as leader, by clients and coordinators (Kafka's BytesInPerSec; replication is not counted). */
  bytesIn: number;
  /** Records appended as leader (Kafka's MessagesInPerSec). */
  messagesIn: number;
  /** Record bytes returned to consumer fetches (Kafka's BytesOutPerSec; follower fetches are not counted). */
  bytesOut: number;
}

export class ReplicaManagerStats {
  private readonly topics = new Map<string, TopicCounters>();
  /** Committed ISR shrinks of partitions led here (Kafka's IsrShrinksPerSec). */
  isrShrinks = 0;
  /** Committed ISR expansions of partitions led here (Kafka's IsrExpandsPerSec). */
  isrExpands = 0;
  /**
   * Clients' Produce requests by acks and by whether their batches carry a producer id (an
   * idempotent or transactional producer): what `logline doctor` reports as producers that are not
   * acks=all with idempotence. Indexed by produceRequestSlot; coordinators' own appends are not counted.
   */
  readonly produceRequests: number[] = [0, 0, 0, 0, 0, 0];

  countProduceRequest(acks: number, idempotent: boolean): void {
    const slot = produceRequestSlot(acks, idempotent);
    if (slot >= 0) this.produceRequests[slot]!++;
  }

  topic(name: string): TopicCounters {
    let t = this.topics.get(name);
    if (t === undefined) this.topics.set(name, t = { bytesIn: 0, messagesIn: 0, bytesOut: 0 });
    return t;
  }

  entries(): IterableIterator<[string, Readonly<TopicCounters>]> {
    return this.topics.entries();
  }
}

/** Where countProduceRequest counts (acks 0, 1, -1 × not idempotent/idempotent); -1 for an invalid acks. */
export function produceRequestSlot(acks: number, idempotent: boolean): number {
  const a = acks === 0 ? 0 : acks === 1 ? 1 : acks === -1 ? 2 : -1;
  return a < 0 ? -1 : a * 2 + (idempotent ? 1 : 0);
}

export interface ProduceRequestCount { acks: 'all' | '0' | '1'; idempotent: boolean; requests: number }

/** The counters as rows, for /metrics and /v1/node. */
export function produceRequestCounts(stats: ReplicaManagerStats): ProduceRequestCount[] {
  const out: ProduceRequestCount[] = [];
  for (const acks of [-1, 1, 0]) {
    for (const idempotent of [true, false]) {
      out.push({ acks: acks === -1 ? 'all' : acks === 1 ? '1' : '0', idempotent, requests: stats.produceRequests[produceRequestSlot(acks, idempotent)]! });
    }
  }
  return out;
}
