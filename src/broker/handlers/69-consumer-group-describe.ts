// ConsumerGroupDescribe (key 69), v0: KIP-848 groups with their epochs, assignor and members (each
// with its current and target assignment, topic names resolved from the metadata). A group that is
// missing or classic answers GROUP_ID_NOT_FOUND, as Kafka does.
import type { ConsumerGroupDescribeRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';
import { topicsSnapshot } from './68-consumer-group-heartbeat.js';

const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

export const consumerGroupDescribeHandler: HandlerSpec<GroupServices, 69> = {
  apiKey: 69,
  minVersion: 0,
  maxVersion: 0,
  handle(request: ConsumerGroupDescribeRequest, ctx) {
    const topics = topicsSnapshot(ctx.services.metadata());
    return {
      throttleTimeMs: 0,
      groups: request.groupIds.map((id) => ({ ...ctx.services.groups.consumerDescribe(id, topics), authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED })),
    };
  },
};
