// ShareGroupHeartbeat (key 76), v0-1 (KIP-932; v1 is Kafka 4.1's stable version, v0 4.0's early
// access, same body): joins a share group (epoch 0, with the client's member id), heartbeats and
// leaves (epoch -1); the group configs share.session.timeout.ms and share.heartbeat.interval.ms
// override the broker's group.share.* keys for its members. The answer carries the member epoch and, when it changed, the member's
// partitions; a partition may be assigned to several members of a share group at once (the simple
// assignor). A member that leaves gives back the records it holds on the partitions led here at
// once (librdkafka also closes its share sessions with each leader, which releases the rest).
// Advertised while the share.version feature is finalized.
import type { ShareGroupHeartbeatRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices, ShareServices } from '../services.js';
import { clientHostOf } from './11-join-group.js';
import { topicsSnapshot } from './68-consumer-group-heartbeat.js';

const LEAVE_EPOCH = -1;
/** ConfigResource type of a group (its share.session.timeout.ms and share.heartbeat.interval.ms). */
const GROUP_RESOURCE = 32;

export const shareGroupHeartbeatHandler: HandlerSpec<GroupServices & Pick<ShareServices, 'share'>, 76> = {
  apiKey: 76,
  minVersion: 0,
  maxVersion: 1,
  feature: 'share.version',
  async handle(request: ShareGroupHeartbeatRequest, ctx) {
    await ctx.services.ensureOffsetsTopic();
    const view = ctx.services.metadata();
    const groupConfigs = view.configs(GROUP_RESOURCE, request.groupId);
    const num = (key: string) => { const v = groupConfigs.get(key); return v === undefined ? undefined : Number(v); };
    const overrides = { sessionTimeoutMs: num('share.session.timeout.ms'), heartbeatIntervalMs: num('share.heartbeat.interval.ms') };
    const r = await ctx.services.groups.shareHeartbeat({ ...request, overrides }, { clientId: ctx.header.clientId ?? '', clientHost: clientHostOf(ctx.clientAddress), apiVersion: ctx.apiVersion },
      topicsSnapshot(view));
    if (request.memberEpoch === LEAVE_EPOCH && r.errorCode === 0) await ctx.services.share.releaseMemberEverywhere(request.groupId, request.memberId);
    return r;
  },
};
