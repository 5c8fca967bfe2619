// CreateTopics (key 19), v2-7 (v0-1 are gone in Kafka 4.0).
// Validation and placement happen in the controller (src/controller/topics.ts), which answers
// per topic: INVALID_TOPIC_EXCEPTION, TOPIC_ALREADY_EXISTS, INVALID_PARTITIONS,
// INVALID_REPLICATION_FACTOR, INVALID_REPLICA_ASSIGNMENT, INVALID_CONFIG, INVALID_REQUEST.
// validate_only runs every check and writes nothing. From v5 the result carries the partition
// count, replication factor and the topic's configs; from v7 the topic id.
import type { CreateTopicsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { TopicAdmin } from '../services.js';

export const createTopicsHandler: HandlerSpec<{ topicAdmin: TopicAdmin }, 19> = {
  apiKey: 19,
  minVersion: 2,
  maxVersion: 7,
  async handle(request: CreateTopicsRequest, ctx) {
    const topics = await ctx.services.topicAdmin.createTopics(request, ctx.apiVersion);
    return { throttleTimeMs: 0, topics };
  },
};
