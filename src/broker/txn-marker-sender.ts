// The transaction coordinator's way to the partition leaders (Kafka's TransactionMarkerChannelManager,
// its network half): a transaction's markers are grouped by each partition's current leader in the
// metadata; the ones led here are written directly, the others go to their leaders in one
// WriteTxnMarkers (key 27) per broker over an inter-broker connection. The answer is an error
// code per partition; the coordinator's TxnMarkerChannel retries the partitions that failed after
// a backoff, and each retry looks the leaders up again, so a partition that moved (NOT_LEADER_OR_FOLLOWER),
// has no leader yet, or whose leader's connection broke is sent to wherever it is led next.
import { ErrorCode, type WriteTxnMarkersResponse } from '../protocol/index.js';
import type { InterBrokerConnections } from '../client/index.js';
import type { TxnMarkerParams } from './services.js';

export interface MarkerResult { topic: string; partition: number; errorCode: number }

export interface TxnMarkerSenderDeps {
  nodeId: number;
  /** The partition's leader in the current metadata: -1 without one, undefined when the partition does not exist. */
  leaderOf(topic: string, partition: number): number | undefined;
  /** WriteTxnMarkers on this broker. */
  writeLocal(m: TxnMarkerParams): Promise<MarkerResult[]>;
  connections: InterBrokerConnections;
  warn(message: string): void;
}

/** WriteTxnMarkers v1 is the flexible version; both carry the same fields. */
const WRITE_TXN_MARKERS_VERSION_MAX = 1;

export class TxnMarkerSender {
  constructor(private readonly deps: TxnMarkerSenderDeps) {}

  /** Writes `m`'s markers on every partition's leader; an error code per partition (0: written). */
  async send(m: TxnMarkerParams): Promise<MarkerResult[]> {
    const byLeader = new Map<number, { topic: string; partition: number }[]>();
    const out: MarkerResult[] = [];
    for (const tp of m.partitions) {
      const leader = this.deps.leaderOf(tp.topic, tp.partition);
      // A deleted partition needs no marker; one without a leader waits for its election.
      if (leader === undefined) out.push({ ...tp, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
      else if (leader < 0) out.push({ ...tp, errorCode: ErrorCode.LEADER_NOT_AVAILABLE });
      else {
        let list = byLeader.get(leader);
        if (!list) byLeader.set(leader, list = []);
        list.push(tp);
      }
    }
    const sent = await Promise.all([...byLeader].map(([leader, partitions]) => (leader === this.deps.nodeId
      ? this.deps.writeLocal({ ...m, partitions })
      : this.sendRemote(leader, { ...m, partitions }))));
    return out.concat(...sent);
  }

  private async sendRemote(leader: number, m: TxnMarkerParams): Promise<MarkerResult[]> {
    const topics = new Map<string, number[]>();
    for (const tp of m.partitions) {
      let list = topics.get(tp.topic);
      if (!list) topics.set(tp.topic, list = []);
      list.push(tp.partition);
    }
    let response: WriteTxnMarkersResponse;
    try {
      const conn = await this.deps.connections.connection(leader);
      response = await conn.send(27, conn.version(27, WRITE_TXN_MARKERS_VERSION_MAX), {
        markers: [{
          producerId: m.producerId, producerEpoch: m.producerEpoch, transactionResult: m.commit, coordinatorEpoch: m.coordinatorEpoch,
          topics: [...topics].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
        }],
      });
    } catch (err) {
      // Kafka's channel treats a lost connection like NOT_LEADER: retry with fresh metadata.
      this.deps.connections.drop(leader);
      this.deps.warn(`markers for producer ${m.producerId} to broker ${leader}: ${err instanceof Error ? err.message : String(err)}`);
      return m.partitions.map((tp) => ({ ...tp, errorCode: ErrorCode.NETWORK_EXCEPTION }));
    }
    const answered = new Map<string, number>();
    for (const marker of response.markers) {
      for (const t of marker.topics) for (const p of t.partitions) answered.set(`${t.name}\u0000${p.partitionIndex}`, p.errorCode);
    }
    // A partition the answer leaves out was not written: retried like any failure.
    return m.partitions.map((tp) => ({ ...tp, errorCode: answered.get(`${tp.topic}\u0000${tp.partition}`) ?? ErrorCode.UNKNOWN_SERVER_ERROR }));
  }
}
