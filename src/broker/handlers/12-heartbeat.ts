// Heartbeat (key 12), v0-4: keeps a classic member's session alive. REBALANCE_IN_PROGRESS tells the
// member to rejoin; ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID and FENCED_INSTANCE_ID (v3+ static
// members) that it is no longer part of the generation.
import type { HeartbeatRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';

export const heartbeatHandler: HandlerSpec<GroupServices, 12> = {
  apiKey: 12,
  minVersion: 0,
  maxVersion: 4,
  async handle(request: HeartbeatRequest, ctx) {
    const errorCode = await ctx.services.groups.heartbeat({
      groupId: request.groupId, memberId: request.memberId, generationId: request.generationId,
      groupInstanceId: ctx.apiVersion >= 3 ? request.groupInstanceId : null,
    });
    return { throttleTimeMs: 0, errorCode };
  },
};
