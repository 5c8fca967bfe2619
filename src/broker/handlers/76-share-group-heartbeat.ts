// ShareGroupHeartbeat (key 76), v0-1 (KIP-932; v1 is Kafka 4.1's stable version, v0 4.0's early
// access, same body): joins a share group (epoch 0, with the client's member id), heartbeats and
// leaves (epoch -1). The answer carries the member epoch and, when it changed, the member's
// partitions; a partition may be assigned to several members of a share group at once (the simple
// assignor). Advertised while the share.version feature is finalized.
import type { ShareGroupHeartbeatRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';
import { clientHostOf } from './11-join-group.js';
import { topicsSnapshot } from './68-consumer-group-heartbeat.js';

export const shareGroupHeartbeatHandler: HandlerSpec<GroupServices, 76> = {
  apiKey: 76,
  minVersion: 0,
  maxVersion: 1,
  feature: 'share.version',
  async handle(request: ShareGroupHeartbeatRequest, ctx) {
    await ctx.services.ensureOffsetsTopic();
    return ctx.services.groups.shareHeartbeat(request, { clientId: ctx.header.clientId ?? '', clientHost: clientHostOf(ctx.clientAddress), apiVersion: ctx.apiVersion },
      topicsSnapshot(ctx.services.metadata()));
  },
};
