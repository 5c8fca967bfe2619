// AlterPartition (key 56), v0-3, on the controller listener.
// A partition leader proposes a new ISR (v3: with each member's broker epoch) at its leader and
// partition epochs. The active controller validates it as Kafka's ReplicationControlManager does
// (STALE_BROKER_EPOCH for a sender that is not its registration; per partition UNKNOWN_TOPIC_ID /
// UNKNOWN_TOPIC_OR_PARTITION, FENCED_LEADER_EPOCH, INVALID_REQUEST when the sender does not lead
// or the ISR is not a subset of the replicas holding the leader, INVALID_UPDATE_VERSION for a
// stale partition epoch, INELIGIBLE_REPLICA (v0-1: OPERATION_NOT_ATTEMPTED) for a fenced,
// shutting-down or re-registered member) and answers with the committed state. Topics by name
// up to v1, by id from v2. NOT_CONTROLLER when this controller is not active.
import type { AlterPartitionRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ControllerServices } from '../services.js';

export const alterPartitionHandler: HandlerSpec<ControllerServices, 56> = {
  apiKey: 56,
  minVersion: 0,
  maxVersion: 3,
  handle(request: AlterPartitionRequest, ctx) {
    return ctx.services.localController.alterPartition(request, ctx.apiVersion);
  },
};
