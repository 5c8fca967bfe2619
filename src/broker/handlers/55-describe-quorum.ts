// DescribeQuorum (key 55), v0-2.
// The metadata quorum as the node's Raft driver sees it: leader, epoch, high watermark, each
// voter's and observer's log end offset and last fetch / caught-up times (Kafka's
// KafkaRaftClient.handleDescribeQuorumRequest). Only `__cluster_metadata` partition 0 is known:
// any other request gets UNKNOWN_TOPIC_OR_PARTITION on each partition it names; a node that does
// not lead answers NOT_LEADER_OR_FOLLOWER. A broker forwards the request to the leader's controller
// listener (as Kafka's brokers forward it to the controller), so any broker answers with the
// leader's view; it answers from its own driver only when it leads, or when no leader is reachable.
// Not yet: v2's Nodes (the voters' controller listeners) is empty, and replica directory ids are
// the zero UUID.
import { ErrorCode, type DescribeQuorumRequest, type DescribeQuorumResponse } from '../../protocol/index.js';
import { raftWire, type QuorumDescription } from '../../raft/index.js';
import type { HandlerSpec } from '../context.js';

const METADATA_TOPIC = '__cluster_metadata';

export interface QuorumServices {
  /** The leader's answer: from this node's driver when it leads, else forwarded to the leader. */
  describeQuorum(request: DescribeQuorumRequest): Promise<DescribeQuorumResponse>;
}

export function describeQuorumAnswer(request: DescribeQuorumRequest, quorum: { description: QuorumDescription; isLeader: boolean }): DescribeQuorumResponse {
  const only = request.topics.length === 1 && request.topics[0]!.topicName === METADATA_TOPIC
    && request.topics[0]!.partitions.length === 1 && request.topics[0]!.partitions[0]!.partitionIndex === 0;
  if (!only) {
    return {
      errorCode: 0, errorMessage: null, nodes: [],
      topics: request.topics.map((t) => ({
        topicName: t.topicName,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null,
          leaderId: -1, leaderEpoch: -1, highWatermark: -1n, currentVoters: [], observers: [],
        })),
      })),
    };
  }
  if (!quorum.isLeader) {
    return {
      errorCode: 0, errorMessage: null, nodes: [],
      topics: [{ topicName: METADATA_TOPIC, partitions: [{
        partitionIndex: 0, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, errorMessage: null,
        leaderId: quorum.description.leaderId ?? -1, leaderEpoch: quorum.description.leaderEpoch, highWatermark: -1n, currentVoters: [], observers: [],
      }] }],
    };
  }
  return raftWire.encodeDescribeQuorum(quorum.description, 0) as DescribeQuorumResponse;
}

export const describeQuorumHandler: HandlerSpec<QuorumServices, 55> = {
  apiKey: 55,
  minVersion: 0,
  maxVersion: 2,
  handle(request: DescribeQuorumRequest, ctx) {
    return ctx.services.describeQuorum(request);
  },
};
