// CreatePartitions (key 37), v0-3.
// Grows a topic to `count` partitions; shrinking or equal counts answer INVALID_PARTITIONS.
// Explicit assignments must name as many distinct registered brokers as the topic's
// replication factor.
// controller_mutation_rate (KIP-599) counts the partitions added: from v3 a topic that comes once
// the quota is used up answers THROTTLING_QUOTA_EXCEEDED; older versions are throttled.
import { ErrorCode, type CreatePartitionsRequest, type CreatePartitionsResponseCreatePartitionsTopicResult } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor } from '../envelope.js';
import { controllerMutationQuota, STRICT_MUTATION_QUOTA_SINCE, THROTTLING_QUOTA_EXCEEDED_MESSAGE, type ClientQuotaManager } from '../quotas.js';
import type { MetadataView, TopicAdmin } from '../services.js';


export const createPartitionsHandler: HandlerSpec<{ topicAdmin: TopicAdmin; mutationQuotas?: () => ClientQuotaManager | undefined; metadata?: () => MetadataView }, 37> = {
  apiKey: 37,
  minVersion: 0,
  maxVersion: 3,
  async handle(request: CreatePartitionsRequest, ctx) {
    const quotas = ctx.services.mutationQuotas?.();
    const quota = controllerMutationQuota(quotas, ctx, STRICT_MUTATION_QUOTA_SINCE.createPartitions);
    const view = quotas !== undefined && !request.validateOnly ? ctx.services.metadata?.() : undefined;
    const refused: CreatePartitionsResponseCreatePartitionsTopicResult[] = [];
    const accepted = view === undefined ? request.topics : request.topics.filter((t) => {
      if (quota.record(t.count - (view.topic(t.name)?.partitions.length ?? t.count))) return true;
      refused.push({ name: t.name, errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED, errorMessage: THROTTLING_QUOTA_EXCEEDED_MESSAGE });
      return false;
    });
    const caller = forwardedFor(ctx);
    const results = accepted.length > 0 ? await ctx.services.topicAdmin.createPartitions(accepted, request.validateOnly, caller) : [];
    return { throttleTimeMs: Math.max(quota.throttleTimeMs, caller.throttleTimeMs ?? 0), results: [...results, ...refused] };
  },
};
