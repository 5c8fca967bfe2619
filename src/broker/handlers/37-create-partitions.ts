// CreatePartitions (key 37), v0-3.
// Grows a topic to `count` partitions; shrinking or equal counts answer INVALID_PARTITIONS.
// Explicit assignments must name as many distinct registered brokers as the topic's
// replication factor.
import type { CreatePartitionsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { TopicAdmin } from '../services.js';

export const createPartitionsHandler: HandlerSpec<{ topicAdmin: TopicAdmin }, 37> = {
  apiKey: 37,
  minVersion: 0,
  maxVersion: 3,
  async handle(request: CreatePartitionsRequest, ctx) {
    const results = await ctx.services.topicAdmin.createPartitions(request.topics, request.validateOnly);
    return { throttleTimeMs: 0, results };
  },
};
