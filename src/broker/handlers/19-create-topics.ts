// CreateTopics (key 19), v0-7. Kafka 4.0 dropped v0-1 (KIP-896); they are kept for the clients
// that still send them (older Go and Node clients create topics with v0): v0 has no validate_only,
// v1 adds it and the error message.
// Validation and placement happen in the controller (src/controller/topics.ts), which answers
// per topic: INVALID_TOPIC_EXCEPTION, TOPIC_ALREADY_EXISTS, INVALID_PARTITIONS,
// INVALID_REPLICATION_FACTOR, INVALID_REPLICA_ASSIGNMENT, INVALID_CONFIG, INVALID_REQUEST.
// validate_only runs every check and writes nothing. From v5 the result carries the partition
// count, replication factor and the topic's configs; from v7 the topic id.
// controller_mutation_rate (KIP-599) counts each topic's partitions where the active controller
// is (`mutationQuotas`: set there, and on a broker only while its own controller is active; a
// broker forwarding to another node leaves it to that controller, whose answer carries the
// throttle): from v6 a topic that comes once the quota is used up answers
// THROTTLING_QUOTA_EXCEEDED; older versions are throttled instead.
import { ErrorCode, ZERO_UUID, type CreateTopicsRequest, type CreateTopicsResponseCreatableTopicResult } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor } from '../envelope.js';
import { controllerMutationQuota, STRICT_MUTATION_QUOTA_SINCE, THROTTLING_QUOTA_EXCEEDED_MESSAGE, type ClientQuotaManager } from '../quotas.js';
import type { TopicAdmin } from '../services.js';


export const createTopicsHandler: HandlerSpec<{ topicAdmin: TopicAdmin; mutationQuotas?: () => ClientQuotaManager | undefined; defaultNumPartitions?: number }, 19> = {
  apiKey: 19,
  minVersion: 0,
  maxVersion: 7,
  async handle(request: CreateTopicsRequest, ctx) {
    const quotas = ctx.services.mutationQuotas?.();
    const quota = controllerMutationQuota(quotas, ctx, STRICT_MUTATION_QUOTA_SINCE.createTopics);
    const refused = new Map<string, CreateTopicsResponseCreatableTopicResult>();
    const accepted = request.validateOnly ? request.topics : request.topics.filter((t) => {
      const partitions = t.assignments.length > 0 ? t.assignments.length : t.numPartitions > 0 ? t.numPartitions : (ctx.services.defaultNumPartitions ?? 1);
      if (quota.record(partitions)) return true;
      refused.set(t.name, {
        name: t.name, topicId: ZERO_UUID, errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED, errorMessage: THROTTLING_QUOTA_EXCEEDED_MESSAGE,
        topicConfigErrorCode: 0, numPartitions: -1, replicationFactor: -1, configs: null,
      });
      return false;
    });
    const caller = forwardedFor(ctx);
    const created = accepted.length > 0 ? await ctx.services.topicAdmin.createTopics({ ...request, topics: accepted }, ctx.apiVersion, caller) : [];
    const topics = refused.size === 0 ? created : request.topics.map((t) => refused.get(t.name) ?? created.find((c) => c.name === t.name)!).filter((t) => t !== undefined);
    return { throttleTimeMs: Math.max(quota.throttleTimeMs, caller.throttleTimeMs ?? 0), topics };
  },
};
