// JoinGroup (key 11), v0-9: the classic rebalance protocol's first phase. The answer waits until the
// join phase completes (all known members rejoined, the rebalance timeout, or — for a new group —
// group.initial.rebalance.delay.ms). v0 has no rebalance timeout (the session timeout is used);
// v4+ asks new dynamic members to come back with the id they are given (MEMBER_ID_REQUIRED,
// KIP-394); v5+ group.instance.id (static membership, KIP-345); v7+ protocol type in the answer;
// v9 skip_assignment for a static leader that rejoined without a rebalance.
import type { JoinGroupRequest, JoinGroupResponse } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';

export const clientHostOf = (address: string): string => `/${address.replace(/^::ffff:/, '')}`;

export const joinGroupHandler: HandlerSpec<GroupServices, 11> = {
  apiKey: 11,
  minVersion: 0,
  maxVersion: 9,
  async handle(request: JoinGroupRequest, ctx) {
    const r: JoinGroupResponse = await ctx.services.groups.join({
      groupId: request.groupId, memberId: request.memberId, groupInstanceId: ctx.apiVersion >= 5 ? request.groupInstanceId : null,
      sessionTimeoutMs: request.sessionTimeoutMs, rebalanceTimeoutMs: ctx.apiVersion >= 1 ? request.rebalanceTimeoutMs : request.sessionTimeoutMs,
      protocolType: request.protocolType, protocols: request.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
      reason: request.reason,
    }, { clientId: ctx.header.clientId ?? '', clientHost: clientHostOf(ctx.clientAddress), apiVersion: ctx.apiVersion });
    // Before v7 the protocol name is not nullable.
    return ctx.apiVersion < 7 ? { ...r, protocolName: r.protocolName ?? '' } : r;
  },
};
