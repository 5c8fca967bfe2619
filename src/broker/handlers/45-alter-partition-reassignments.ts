// AlterPartitionReassignments (key 45), v0.
// Starts, replaces or cancels (null replicas) partition reassignments; the controller decides and
// writes the PartitionChangeRecords and the answer comes once they are committed. Per partition:
// UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT (empty, duplicate or unregistered
// brokers; a cancel that would need an unclean election), NO_REASSIGNMENT_IN_PROGRESS (a cancel
// with nothing to cancel); NOT_CONTROLLER at the top level when no active controller answered.
// v1 (KIP-860's allowReplicationFactorChange) is not offered yet.
import type { AlterPartitionReassignmentsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor } from '../envelope.js';
import type { ControllerChannel } from '../controller-channel.js';

export const alterPartitionReassignmentsHandler: HandlerSpec<{ controller: ControllerChannel }, 45> = {
  apiKey: 45,
  minVersion: 0,
  maxVersion: 0,
  handle(request: AlterPartitionReassignmentsRequest, ctx) {
    return ctx.services.controller.alterPartitionReassignments(request, forwardedFor(ctx));
  },
};
