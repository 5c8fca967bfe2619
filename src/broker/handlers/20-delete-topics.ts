// DeleteTopics (key 20), v1-6 (v0 is gone in Kafka 4.0).
// By name up to v5 (topic_names), by name or topic id from v6. Unknown names answer
// UNKNOWN_TOPIC_OR_PARTITION, unknown ids UNKNOWN_TOPIC_ID.
import { ZERO_UUID, type DeleteTopicsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { TopicAdmin } from '../services.js';

export const deleteTopicsHandler: HandlerSpec<{ topicAdmin: TopicAdmin }, 20> = {
  apiKey: 20,
  minVersion: 1,
  maxVersion: 6,
  async handle(request: DeleteTopicsRequest, ctx) {
    const targets = ctx.apiVersion >= 6
      ? request.topics.map((t) => ({ name: t.name, topicId: t.topicId }))
      : request.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
    const responses = await ctx.services.topicAdmin.deleteTopics(targets);
    return { throttleTimeMs: 0, responses };
  },
};
