// DeleteGroups (key 42), v0-2: deletes empty groups and their committed offsets (tombstones in
// `__consumer_offsets`). A share group's share-partitions lose their state too
// (DeleteShareGroupState wherever each is led), once the group's deletion is written: a failure
// there leaves state no group refers to, which a new group of that name would find. Per group:
// GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS.
import { ErrorCode, type DeleteGroupsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';

export const deleteGroupsHandler: HandlerSpec<GroupServices, 42> = {
  apiKey: 42,
  minVersion: 0,
  maxVersion: 2,
  async handle(request: DeleteGroupsRequest, ctx) {
    const s = ctx.services;
    const groupIds = [...new Set(request.groupsNames)];
    // The share-partitions of share groups, known before the groups are gone.
    const shareTopics = new Map(groupIds.map((g) => [g, s.groups.shareGroupTopics(g).topics]));
    const results = await s.groups.deleteGroups(groupIds);
    const persister = s.sharePersister;
    if (persister) {
      await Promise.all(results.filter((r) => r.errorCode === ErrorCode.NONE).flatMap((r) => (shareTopics.get(r.groupId) ?? [])
        .flatMap((t) => t.partitions.map((partition) => persister.delete({ groupId: r.groupId, topicId: t.topicId, partition })))));
    }
    return { throttleTimeMs: 0, results };
  },
};
