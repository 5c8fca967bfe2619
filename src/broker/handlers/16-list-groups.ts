// ListGroups (key 16), v0-5: every group this broker coordinates. v4+ filter by state and report
// it; v5+ filter by type ("classic", "consumer", "share") and report it. Filters match case-insensitively.
// COORDINATOR_LOAD_IN_PROGRESS (with the groups of the shards already loaded) while a shard loads.
import type { ListGroupsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';

export const listGroupsHandler: HandlerSpec<GroupServices, 16> = {
  apiKey: 16,
  minVersion: 0,
  maxVersion: 5,
  handle(request: ListGroupsRequest, ctx) {
    const out = ctx.services.groups.list(ctx.apiVersion >= 4 ? request.statesFilter : [], ctx.apiVersion >= 5 ? request.typesFilter : []);
    return { throttleTimeMs: 0, errorCode: out.errorCode, groups: out.groups };
  },
};
