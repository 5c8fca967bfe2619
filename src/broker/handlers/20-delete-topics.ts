// DeleteTopics (key 20), v0-6. Kafka 4.0 dropped v0 (KIP-896); it is kept for older clients (v0
// has no throttle time).
// By name up to v5 (topic_names), by name or topic id from v6. Unknown names answer
// UNKNOWN_TOPIC_OR_PARTITION, unknown ids UNKNOWN_TOPIC_ID.
// controller_mutation_rate (KIP-599) counts each topic's partitions: from v5 a topic that comes
// once the quota is used up answers THROTTLING_QUOTA_EXCEEDED; older versions are throttled.
// With delete.topic.enable=false every topic answers TOPIC_DELETION_DISABLED (INVALID_REQUEST
// before v3), as Kafka's controller does; here the broker a client asks checks its own setting too.
import { ErrorCode, ZERO_UUID, type DeleteTopicsRequest, type DeleteTopicsResponseDeletableTopicResult } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor } from '../envelope.js';
import { controllerMutationQuota, STRICT_MUTATION_QUOTA_SINCE, THROTTLING_QUOTA_EXCEEDED_MESSAGE, type ClientQuotaManager } from '../quotas.js';
import type { MetadataView, TopicAdmin } from '../services.js';


export const deleteTopicsHandler: HandlerSpec<{ topicAdmin: TopicAdmin; mutationQuotas?: () => ClientQuotaManager | undefined; metadata?: () => MetadataView; deleteTopicEnable?: boolean }, 20> = {
  apiKey: 20,
  minVersion: 0,
  maxVersion: 6,
  async handle(request: DeleteTopicsRequest, ctx) {
    const targets = ctx.apiVersion >= 6
      ? request.topics.map((t) => ({ name: t.name, topicId: t.topicId }))
      : request.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
    if (ctx.services.deleteTopicEnable === false) {
      const errorCode = ctx.apiVersion >= 3 ? ErrorCode.TOPIC_DELETION_DISABLED : ErrorCode.INVALID_REQUEST;
      return { throttleTimeMs: 0, responses: targets.map((t) => ({ name: t.name, topicId: t.topicId, errorCode, errorMessage: 'Topic deletion is disabled.' })) };
    }
    const quotas = ctx.services.mutationQuotas?.();
    const quota = controllerMutationQuota(quotas, ctx, STRICT_MUTATION_QUOTA_SINCE.deleteTopics);
    const view = quotas !== undefined ? ctx.services.metadata?.() : undefined;
    const refused: DeleteTopicsResponseDeletableTopicResult[] = [];
    const accepted = view === undefined ? targets : targets.filter((t) => {
      const topic = t.topicId !== ZERO_UUID ? view.topicById(t.topicId) : t.name !== null ? view.topic(t.name) : undefined;
      if (quota.record(topic?.partitions.length ?? 0)) return true;
      refused.push({ name: t.name, topicId: t.topicId, errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED, errorMessage: THROTTLING_QUOTA_EXCEEDED_MESSAGE });
      return false;
    });
    const caller = forwardedFor(ctx);
    const responses = accepted.length > 0 ? await ctx.services.topicAdmin.deleteTopics(accepted, caller) : [];
    return { throttleTimeMs: Math.max(quota.throttleTimeMs, caller.throttleTimeMs ?? 0), responses: [...responses, ...refused] };
  },
};
