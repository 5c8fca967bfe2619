// ElectLeaders (key 43), v0-2.
// Preferred (type 0) or unclean (type 1) election for the named partitions, or for all when the
// list is null. Leader changes go through the controller; until there are followers to elect
// (the replication issue), a partition led by its preferred replica answers
// ELECTION_NOT_NEEDED, one without a live preferred leader PREFERRED_LEADER_NOT_AVAILABLE, and
// an unknown one UNKNOWN_TOPIC_OR_PARTITION, exactly as Kafka reports those cases.
import { ErrorCode, type ElectLeadersRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { MetadataView } from '../services.js';

const UNCLEAN = 1;

export const electLeadersHandler: HandlerSpec<{ metadata(): MetadataView }, 43> = {
  apiKey: 43,
  minVersion: 0,
  maxVersion: 2,
  handle(request: ElectLeadersRequest, ctx) {
    const view = ctx.services.metadata();
    const targets = request.topicPartitions ?? [...view.topics()].map((t) => ({ topic: t.name, partitions: t.partitions.map((p) => p.partition) }));
    const unclean = ctx.apiVersion >= 1 && request.electionType === UNCLEAN;
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      replicaElectionResults: targets.map((t) => ({
        topic: t.topic,
        partitionResult: t.partitions.map((partitionId) => {
          const p = view.topic(t.topic)?.partitions.find((x) => x.partition === partitionId);
          if (!p) return { partitionId, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'The partition does not exist.' };
          const settled = unclean ? p.leader >= 0 : p.leader === p.replicas[0];
          if (settled) return { partitionId, errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: 'Leader election not needed for topic partition.' };
          return { partitionId, errorCode: ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, errorMessage: 'The preferred leader is not available.' };
        }),
      })),
    };
  },
};
