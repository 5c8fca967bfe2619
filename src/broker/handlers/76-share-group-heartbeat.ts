// ShareGroupHeartbeat (key 76), v0-1 (KIP-932; v1 is Kafka 4.1's stable version, v0 4.0's early
// access, same body): joins a share group (epoch 0, with the client's member id), heartbeats and
// leaves (epoch -1); the group configs share.session.timeout.ms and share.heartbeat.interval.ms
// override the broker's group.share.* keys for its members. The answer carries the member epoch and, when it changed, the member's
// partitions; a partition may be assigned to several members of a share group at once (the simple
// assignor). Leaving releases no records: a closing consumer sends its last acknowledgements and
// closes its share session with each leader (final epoch, which gives back what it still holds)
// while it leaves, and librdkafka sends the leave alongside, so a release here would race them and
// turn an accept still on its way into a redelivery. What a member gone without closing held comes
// back when its locks run out, as in Kafka.
// Advertised while the share.version feature is finalized.
import type { ShareGroupHeartbeatRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';
import { clientHostOf } from './11-join-group.js';
import { topicsSnapshot } from './68-consumer-group-heartbeat.js';

/** ConfigResource type of a group (its share.session.timeout.ms and share.heartbeat.interval.ms). */
const GROUP_RESOURCE = 32;

export const shareGroupHeartbeatHandler: HandlerSpec<GroupServices, 76> = {
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
    return ctx.services.groups.shareHeartbeat({ ...request, overrides }, { clientId: ctx.header.clientId ?? '', clientHost: clientHostOf(ctx.clientAddress), apiVersion: ctx.apiVersion },
      topicsSnapshot(view));
  },
};
