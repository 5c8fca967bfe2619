// ElectLeaders (key 43), v0-2.
// Preferred (type 0; v0 has no type) or unclean (type 1) election for the named partitions, or
// for all when the list is null (then only the partitions that needed an election are reported,
// as Kafka does). The controller decides and writes the PartitionChangeRecords; the answer comes
// once they are committed: ELECTION_NOT_NEEDED when the partition already has that leader,
// PREFERRED_LEADER_NOT_AVAILABLE / ELIGIBLE_LEADERS_NOT_AVAILABLE when no replica may lead,
// UNKNOWN_TOPIC_OR_PARTITION for an unknown one, NOT_CONTROLLER (top level) when the controller
// reached is not active.
import type { ElectLeadersRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor } from '../envelope.js';
import type { ControllerChannel } from '../controller-channel.js';

const PREFERRED = 0;

export const electLeadersHandler: HandlerSpec<{ controller: ControllerChannel }, 43> = {
  apiKey: 43,
  minVersion: 0,
  maxVersion: 2,
  async handle(request: ElectLeadersRequest, ctx) {
    const electionType = ctx.apiVersion >= 1 ? request.electionType : PREFERRED;
    const r = await ctx.services.controller.electLeaders({ ...request, electionType }, forwardedFor(ctx));
    return { throttleTimeMs: 0, errorCode: r.errorCode, replicaElectionResults: r.results };
  },
};
