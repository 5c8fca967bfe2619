// ConsumerGroupHeartbeat (key 68), v0-1: the KIP-848 consumer group protocol. One request both
// joins (epoch 0), heartbeats and reconciles: the answer carries the member epoch and, when it
// changed, the member's assignment; partitions another member still owns are held back until it
// revokes them. Epoch -1 leaves, -2 leaves temporarily (static members). v0: the coordinator picks
// the member id; v1: the client does. Server assignors: `uniform` (default) and `range`.
// Regex subscriptions are matched with JavaScript regular expressions (Kafka uses RE2J).
import type { ConsumerGroupHeartbeatRequest } from '../../protocol/index.js';
import type { TopicsSnapshot } from '../../coordinator/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices, MetadataView } from '../services.js';
import { clientHostOf } from './11-join-group.js';

export function topicsSnapshot(view: MetadataView): TopicsSnapshot {
  return {
    byName: (name) => { const t = view.topic(name); return t && { id: t.id, partitions: t.partitions.length }; },
    nameOf: (id) => view.topicById(id)?.name,
    names: () => [...view.topics()].map((t) => t.name),
  };
}

export const consumerGroupHeartbeatHandler: HandlerSpec<GroupServices, 68> = {
  apiKey: 68,
  minVersion: 0,
  maxVersion: 1,
  async handle(request: ConsumerGroupHeartbeatRequest, ctx) {
    // KIP-848 clients may heartbeat before anything created the offsets topic.
    await ctx.services.ensureOffsetsTopic();
    return ctx.services.groups.consumerHeartbeat(request, { clientId: ctx.header.clientId ?? '', clientHost: clientHostOf(ctx.clientAddress), apiVersion: ctx.apiVersion },
      topicsSnapshot(ctx.services.metadata()));
  },
};
