// The share coordinator on another broker (Kafka's PersisterStateManager): a share-partition
// leader whose state lives in a `__share_group_state` partition led elsewhere reads, initializes
// and writes it there with the share-coordinator RPCs (InitializeShareGroupState,
// ReadShareGroupState, WriteShareGroupState, DeleteShareGroupState, v0), one share-partition per
// request. A share-partition's operations run one at a time already (its manager orders them), so
// there is no batching to do here; a connection answers in order, so requests of different
// share-partitions are pipelined on it.
//
// Errors are the coordinator's codes; a broken connection or a missing answer is
// NETWORK_EXCEPTION, which the caller retries like a coordinator that moved.
import { ApiKey, ErrorCode } from '../protocol/index.js';
import type { ReadResult, SharePartitionKey, WriteParams } from '../coordinator/index.js';
import type { InterBrokerConnections } from '../client/index.js';
import { stateBatchesFromWire, stateBatchesToWire } from './handlers/share-state-common.js';

/** Produce by topic name (v12 is the last before topic ids). */
const PRODUCE_VERSION_MAX = 12;

type PartitionAnswer = { partition: number; errorCode: number; errorMessage?: string | null };
type Answer<P extends PartitionAnswer> = { results: { topicId: string; partitions: P[] }[] };

export class ShareStateSender {
  constructor(private readonly connections: InterBrokerConnections, private readonly warn: (message: string) => void) {}

  initialize(nodeId: number, k: SharePartitionKey, stateEpoch: number, startOffset: number): Promise<number> {
    return this.code(nodeId, ApiKey.InitializeShareGroupState, k, { partition: k.partition, stateEpoch, startOffset: BigInt(startOffset) });
  }

  write(nodeId: number, p: WriteParams): Promise<number> {
    return this.code(nodeId, ApiKey.WriteShareGroupState, p, {
      partition: p.partition, stateEpoch: p.stateEpoch, leaderEpoch: p.leaderEpoch, startOffset: BigInt(p.startOffset), stateBatches: stateBatchesToWire(p.stateBatches),
    });
  }

  delete(nodeId: number, k: SharePartitionKey): Promise<number> {
    return this.code(nodeId, ApiKey.DeleteShareGroupState, k, { partition: k.partition });
  }

  /** ReadShareGroupState; `leaderEpoch` -1 reads without recording an epoch (an admin's read). */
  async read(nodeId: number, k: SharePartitionKey, leaderEpoch: number): Promise<ReadResult> {
    type P = PartitionAnswer & { stateEpoch: number; startOffset: bigint; stateBatches: { firstOffset: bigint; lastOffset: bigint; deliveryState: number; deliveryCount: number }[] };
    const r = await this.send<P>(nodeId, ApiKey.ReadShareGroupState, k, { partition: k.partition, leaderEpoch });
    if (typeof r === 'number') return { errorCode: r, errorMessage: null };
    if (r.errorCode !== ErrorCode.NONE) return { errorCode: r.errorCode, errorMessage: r.errorMessage ?? null };
    return { errorCode: 0, errorMessage: null, stateEpoch: r.stateEpoch, startOffset: Number(r.startOffset), stateBatches: stateBatchesFromWire(r.stateBatches) };
  }

  /** ReadShareGroupStateSummary: the start offset and state epoch, without the batches. */
  async summary(nodeId: number, k: SharePartitionKey): Promise<ReadResult> {
    type P = PartitionAnswer & { stateEpoch: number; startOffset: bigint };
    const r = await this.send<P>(nodeId, ApiKey.ReadShareGroupStateSummary, k, { partition: k.partition, leaderEpoch: -1 });
    if (typeof r === 'number') return { errorCode: r, errorMessage: null };
    if (r.errorCode !== ErrorCode.NONE) return { errorCode: r.errorCode, errorMessage: r.errorMessage ?? null };
    return { errorCode: 0, errorMessage: null, stateEpoch: r.stateEpoch, startOffset: Number(r.startOffset) };
  }

  /**
   * A Produce (acks=all) of one batch to a partition `nodeId` leads: a share-partition leader's
   * dead letters for a dead-letter topic partition led elsewhere. Its own sender (connection) is
   * used for these, so a slow dead-letter topic does not hold up state writes.
   */
  async produce(nodeId: number, topic: string, partition: number, records: Buffer, timeoutMs: number): Promise<number> {
    try {
      const conn = await this.connections.connection(nodeId);
      const r = await conn.send<{ responses: { name: string; partitionResponses: { index: number; errorCode: number }[] }[] }>(ApiKey.Produce, conn.version(ApiKey.Produce, PRODUCE_VERSION_MAX), {
        transactionalId: null, acks: -1, timeoutMs, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
      });
      return r.responses.find((t) => t.name === topic)?.partitionResponses.find((p) => p.index === partition)?.errorCode ?? ErrorCode.NETWORK_EXCEPTION;
    } catch (err) {
      this.connections.drop(nodeId);
      this.warn(`dead letters to broker ${nodeId}: ${err instanceof Error ? err.message : String(err)}`);
      return ErrorCode.NETWORK_EXCEPTION;
    }
  }

  private async code(nodeId: number, apiKey: number, k: SharePartitionKey, partition: object): Promise<number> {
    const r = await this.send(nodeId, apiKey, k, partition);
    return typeof r === 'number' ? r : r.errorCode;
  }

  /** One request for one share-partition; its partition's answer, or NETWORK_EXCEPTION. Never rejects. */
  private async send<P extends PartitionAnswer>(nodeId: number, apiKey: number, k: SharePartitionKey, partition: object): Promise<P | number> {
    let response: Answer<P>;
    try {
      const conn = await this.connections.connection(nodeId);
      response = await conn.send<Answer<P>>(apiKey, conn.version(apiKey, 0), { groupId: k.groupId, topics: [{ topicId: k.topicId, partitions: [partition] }] });
    } catch (err) {
      this.connections.drop(nodeId);
      this.warn(`share state with broker ${nodeId}: ${err instanceof Error ? err.message : String(err)}`);
      return ErrorCode.NETWORK_EXCEPTION;
    }
    return response.results.find((t) => t.topicId === k.topicId)?.partitions.find((p) => p.partition === k.partition) ?? ErrorCode.NETWORK_EXCEPTION;
  }
}
