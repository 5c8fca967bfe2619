// OffsetDelete (key 47), v0: removes committed offsets of partitions the group no longer consumes.
// Top level: GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP (a non-empty group that is not a consumer
// group); per partition: GROUP_SUBSCRIBED_TO_TOPIC while a member subscribes to the topic,
// UNKNOWN_TOPIC_OR_PARTITION for partitions that do not exist.
import { ErrorCode, type OffsetDeleteRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';

export const offsetDeleteHandler: HandlerSpec<GroupServices, 47> = {
  apiKey: 47,
  minVersion: 0,
  maxVersion: 0,
  async handle(request: OffsetDeleteRequest, ctx) {
    const view = ctx.services.metadata();
    const exists = (t: string, p: number) => view.topic(t)?.partitions.some((x) => x.partition === p) ?? false;
    const known = request.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => p.partitionIndex).filter((p) => exists(t.name, p)) }));
    const out = await ctx.services.groups.deleteOffsets(request.groupId, known);
    if (out.errorCode !== 0) return { errorCode: out.errorCode, throttleTimeMs: 0, topics: [] };
    const code = (t: string, p: number) => (exists(t, p)
      ? out.topics.find((x) => x.name === t)?.partitions.find((x) => x.partitionIndex === p)?.errorCode ?? ErrorCode.NONE
      : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    return {
      errorCode: 0, throttleTimeMs: 0,
      topics: request.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code(t.name, p.partitionIndex) })) })),
    };
  },
};
