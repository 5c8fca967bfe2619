// Metadata (key 3), v0-12.
// Brokers on the listener the request came in on, topics with partitions (leader, epoch,
// replicas, ISR, offline replicas). A null topic list (v1+) or an empty one in v0 means all
// topics. Unknown topics are created when the request allows it (v4+, always before v4) and
// `auto.create.topics.enable` is set; they come back as LEADER_NOT_AVAILABLE until created, as
// Kafka does; a name Kafka refuses (`bad$name!`, `..`, longer than 249) is INVALID_TOPIC_EXCEPTION
// whether or not auto-creation is on, so clients fail its records at once. Topic ids from v10; lookups by id in v10+ (name null) answer UNKNOWN_TOPIC_ID.
// Auto-creation is the client's own topic creation, as in Kafka's AutoTopicCreationManager: the
// controller authorizes it as the client and charges the client's controller_mutation_rate (a topic
// over the quota is not created now, and stays LEADER_NOT_AVAILABLE until a later Metadata creates it).
// Authorized operations are reported as "not requested" (ACLs arrive with the security issue).
// Handled in turn: only once every earlier request on the connection is answered, as Kafka does.
import { ErrorCode, ZERO_UUID, type MetadataRequest } from '../../protocol/index.js';
import { isInternalTopic, topicNameError } from '../../controller/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor, type ForwardedFor } from '../envelope.js';
import type { MetadataView, TopicView } from '../services.js';

const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

export interface MetadataServices {
  metadata(): MetadataView;
  autoCreateTopicsEnable: boolean;
  /** Creates these topics with the broker defaults for `caller`; resolves when the controller answered. */
  autoCreateTopics(names: string[], caller: ForwardedFor): Promise<void>;
}

function topicEntry(t: TopicView) {
  return {
    errorCode: 0, name: t.name, topicId: t.id, isInternal: t.isInternal, topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
    partitions: t.partitions.map((p) => ({
      errorCode: p.leader < 0 ? ErrorCode.LEADER_NOT_AVAILABLE : 0, partitionIndex: p.partition, leaderId: p.leader,
      leaderEpoch: p.leaderEpoch, replicaNodes: p.replicas, isrNodes: p.isr, offlineReplicas: p.offlineReplicas,
    })),
  };
}

const missing = (errorCode: number, name: string | null, topicId = ZERO_UUID) =>
  ({ errorCode, name, topicId, isInternal: name !== null && isInternalTopic(name), partitions: [], topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED });

export const metadataHandler: HandlerSpec<MetadataServices, 3> = {
  apiKey: 3,
  minVersion: 0,
  maxVersion: 12,
  // The leaders named must be the broker's latest when the answer leaves, not when the request came
  // in behind a produce still waiting for acks=all (see RequestChannel.inTurn).
  answersInTurn: true,
  async handle(request: MetadataRequest, ctx) {
    const s = ctx.services;
    let view = s.metadata();
    const all = request.topics === null || (ctx.apiVersion === 0 && request.topics.length === 0);
    const allowAuto = ctx.apiVersion < 4 ? true : request.allowAutoTopicCreation;
    let topics;
    if (all) {
      topics = [...view.topics()].map(topicEntry);
    } else {
      const requested = request.topics!;
      const unknown = requested.filter((t) => t.name !== null && !view.topic(t.name) && topicNameError(t.name) === null).map((t) => t.name!);
      if (unknown.length > 0 && allowAuto && s.autoCreateTopicsEnable) {
        await s.autoCreateTopics([...new Set(unknown)], forwardedFor(ctx));
        view = s.metadata();
      }
      topics = requested.map((t) => {
        if (t.name === null) {
          const byId = view.topicById(t.topicId);
          return byId ? topicEntry(byId) : missing(ErrorCode.UNKNOWN_TOPIC_ID, null, t.topicId);
        }
        const found = view.topic(t.name);
        if (found) return topicEntry(found);
        if (topicNameError(t.name) !== null) return missing(ErrorCode.INVALID_TOPIC_EXCEPTION, t.name);
        const autoCreating = allowAuto && s.autoCreateTopicsEnable;
        return missing(autoCreating ? ErrorCode.LEADER_NOT_AVAILABLE : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, t.name);
      });
    }
    return {
      throttleTimeMs: 0,
      brokers: view.brokers(ctx.listenerName),
      clusterId: view.clusterId,
      controllerId: view.controllerId,
      topics,
      clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
    };
  },
};
