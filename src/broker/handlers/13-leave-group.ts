// LeaveGroup (key 13), v0-5. v0-2 name one member and answer with a top-level error; v3+ name a
// batch of members (by member id or group.instance.id, so an operator can remove static members)
// and answer per member. Leaving starts a rebalance for the members that stay.
import { ErrorCode, type LeaveGroupRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';

export const leaveGroupHandler: HandlerSpec<GroupServices, 13> = {
  apiKey: 13,
  minVersion: 0,
  maxVersion: 5,
  async handle(request: LeaveGroupRequest, ctx) {
    const batch = ctx.apiVersion >= 3;
    const who = batch ? request.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId })) : [{ memberId: request.memberId, groupInstanceId: null }];
    const out = await ctx.services.groups.leave(request.groupId, who);
    if (!batch) return { throttleTimeMs: 0, errorCode: out.errorCode || (out.results[0] ?? ErrorCode.NONE), members: [] };
    return {
      throttleTimeMs: 0, errorCode: out.errorCode,
      members: out.errorCode !== 0 ? [] : who.map((m, i) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: out.results[i] ?? ErrorCode.NONE })),
    };
  },
};
