// DeleteGroups (key 42), v0-2: deletes empty groups and their committed offsets (tombstones in
// `__consumer_offsets`). Per group: GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS.
import type { DeleteGroupsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';

export const deleteGroupsHandler: HandlerSpec<GroupServices, 42> = {
  apiKey: 42,
  minVersion: 0,
  maxVersion: 2,
  async handle(request: DeleteGroupsRequest, ctx) {
    const results = await ctx.services.groups.deleteGroups([...new Set(request.groupsNames)]);
    return { throttleTimeMs: 0, results };
  },
};
