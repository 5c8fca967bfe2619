// OffsetCommit (key 8), v0-9. Stores a group's consumed positions in `__consumer_offsets`; the
// answer waits for the write. v1 carries a per-partition commit timestamp, v2-4 a retention time
// (an explicit expiry, OffsetCommitValue v1), v6+ the leader epoch, v7+ group.instance.id. A commit
// from a member is checked against the generation (classic: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
// FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS while CompletingRebalance) or the member epoch
// (consumer groups: STALE_MEMBER_EPOCH, FENCED_MEMBER_EPOCH); generation -1 with no member id is an
// admin commit, allowed while the group is empty. v9+: GROUP_ID_NOT_FOUND for a member commit to an
// unknown group. Partitions of unknown topics answer UNKNOWN_TOPIC_OR_PARTITION, as in Kafka.
import { ErrorCode, type OffsetCommitRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';
import { clientHostOf } from './11-join-group.js';

export const offsetCommitHandler: HandlerSpec<GroupServices, 8> = {
  apiKey: 8,
  minVersion: 0,
  maxVersion: 9,
  async handle(request: OffsetCommitRequest, ctx) {
    const view = ctx.services.metadata();
    const exists = (t: string, p: number) => view.topic(t)?.partitions.some((x) => x.partition === p) ?? false;
    const v = ctx.apiVersion;
    const topics = request.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.filter((p) => exists(t.name, p.partitionIndex)).map((p) => ({
        partitionIndex: p.partitionIndex, committedOffset: p.committedOffset, committedLeaderEpoch: v >= 6 ? p.committedLeaderEpoch : -1,
        commitTimestamp: v === 1 ? p.commitTimestamp : -1n, committedMetadata: p.committedMetadata,
      })),
    })).filter((t) => t.partitions.length > 0);
    const results = topics.length === 0 ? [] : await ctx.services.groups.commitOffsets({
      groupId: request.groupId, generationIdOrMemberEpoch: v >= 1 ? request.generationIdOrMemberEpoch : -1, memberId: v >= 1 ? request.memberId : '',
      groupInstanceId: v >= 7 ? request.groupInstanceId : null, retentionTimeMs: v >= 2 && v <= 4 ? Number(request.retentionTimeMs) : -1, topics,
    }, { clientId: ctx.header.clientId ?? '', clientHost: clientHostOf(ctx.clientAddress), apiVersion: v });
    const code = (t: string, p: number) => (exists(t, p)
      ? results.find((x) => x.name === t)?.partitions.find((x) => x.partitionIndex === p)?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR
      : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    return {
      throttleTimeMs: 0,
      topics: request.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code(t.name, p.partitionIndex) })) })),
    };
  },
};
