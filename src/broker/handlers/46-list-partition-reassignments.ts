// ListPartitionReassignments (key 46), v0.
// The reassignments in progress as the active controller sees them (replicas, addingReplicas,
// removingReplicas), for every topic or for the partitions named; partitions that are not being
// reassigned and unknown topics are left out, as Kafka does. NOT_CONTROLLER at the top level when
// no active controller answered.
import type { ListPartitionReassignmentsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor } from '../envelope.js';
import type { ControllerChannel } from '../controller-channel.js';

export const listPartitionReassignmentsHandler: HandlerSpec<{ controller: ControllerChannel }, 46> = {
  apiKey: 46,
  minVersion: 0,
  maxVersion: 0,
  handle(request: ListPartitionReassignmentsRequest, ctx) {
    return ctx.services.controller.listPartitionReassignments(request, forwardedFor(ctx));
  },
};
