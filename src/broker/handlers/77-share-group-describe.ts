// ShareGroupDescribe (key 77), v0-1 (KIP-932): share groups with their epochs, assignor ("simple")
// and members, each with its assigned partitions (topic names resolved from the metadata). A group
// that is missing or of another type answers GROUP_ID_NOT_FOUND, as Kafka does.
import type { ShareGroupDescribeRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';
import { topicsSnapshot } from './68-consumer-group-heartbeat.js';

const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

export const shareGroupDescribeHandler: HandlerSpec<GroupServices, 77> = {
  apiKey: 77,
  minVersion: 0,
  maxVersion: 1,
  feature: 'share.version',
  handle(request: ShareGroupDescribeRequest, ctx) {
    const topics = topicsSnapshot(ctx.services.metadata());
    return {
      throttleTimeMs: 0,
      groups: request.groupIds.map((id) => ({ ...ctx.services.groups.shareDescribe(id, topics), authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED })),
    };
  },
};
