// SyncGroup (key 14), v0-5: the classic protocol's second phase. The leader sends every member's
// assignment; each member's answer waits until the leader's assignment is written to
// `__consumer_offsets`. v3+ group.instance.id; v5+ protocol type and name are checked against the
// group's (INCONSISTENT_GROUP_PROTOCOL) and echoed back.
import type { SyncGroupRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';

export const syncGroupHandler: HandlerSpec<GroupServices, 14> = {
  apiKey: 14,
  minVersion: 0,
  maxVersion: 5,
  async handle(request: SyncGroupRequest, ctx) {
    return ctx.services.groups.sync({
      groupId: request.groupId, generationId: request.generationId, memberId: request.memberId,
      groupInstanceId: ctx.apiVersion >= 3 ? request.groupInstanceId : null,
      protocolType: ctx.apiVersion >= 5 ? request.protocolType : null, protocolName: ctx.apiVersion >= 5 ? request.protocolName : null,
      assignments: request.assignments.map((a) => ({ memberId: a.memberId, assignment: Buffer.from(a.assignment) })),
    });
  },
};
