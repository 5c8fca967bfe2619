// DescribeGroups (key 15), v0-5: state, protocol type, the selected protocol (Stable only) and the
// members with client id, host and — when Stable — their subscription metadata and assignment. An
// unknown group is described as Dead with no error (GROUP_ID_NOT_FOUND arrives in v6, which the
// schemas here do not have). Authorized operations are "not requested" until ACLs exist.
import type { DescribeGroupsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';

const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

export const describeGroupsHandler: HandlerSpec<GroupServices, 15> = {
  apiKey: 15,
  minVersion: 0,
  maxVersion: 5,
  handle(request: DescribeGroupsRequest, ctx) {
    return {
      throttleTimeMs: 0,
      groups: request.groups.map((id) => {
        const d = ctx.services.groups.describe(id);
        return {
          errorCode: d.errorCode, groupId: id, groupState: d.state, protocolType: d.protocolType, protocolData: d.protocolName,
          authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
          members: d.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost, memberMetadata: m.metadata, memberAssignment: m.assignment })),
        };
      }),
    };
  },
};
