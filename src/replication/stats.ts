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

  topic(name: string): TopicCounters {
    let t = this.topics.get(name);
    if (t === undefined) this.topics.set(name, t = { bytesIn: 0, messagesIn: 0, bytesOut: 0 });
    return t;
  }

  entries(): IterableIterator<[string, Readonly<TopicCounters>]> {
    return this.topics.entries();
  }
}
