// DeleteAcls (key 31), v0-3. Each filter (ANY and MATCH pattern types allowed, null fields match
// everything) removes the ACLs it matches, through the active controller; the result lists them
// per filter. A malformed filter answers INVALID_REQUEST. Needs ALTER on the cluster;
// SECURITY_DISABLED without an authorizer.
// v0 (dropped by Kafka 4.0, KIP-896, kept for older clients) has no pattern types: its filters
// and bindings are LITERAL (the schema's default), so it sees and changes literal ACLs only.
import { ErrorCode, type DeleteAclsRequest } from '../../protocol/index.js';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../../metadata/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor } from '../envelope.js';
import type { AclServices } from '../services.js';

export const deleteAclsHandler: HandlerSpec<AclServices, 31> = {
  apiKey: 31,
  minVersion: 0,
  maxVersion: 3,
  async handle(request: DeleteAclsRequest, ctx) {
    const all = (errorCode: number, errorMessage: string | null) => ({ throttleTimeMs: 0, filterResults: request.filters.map(() => ({ errorCode, errorMessage, matchingAcls: [] })) });
    if (!ctx.services.aclAdmin.enabled) return all(ErrorCode.SECURITY_DISABLED, 'No authorizer is configured (authorizer.class.name).');
    if (ctx.authz !== undefined && !ctx.authz.allowed(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, null);
    return { throttleTimeMs: 0, filterResults: await ctx.services.controller.deleteAcls(request.filters, forwardedFor(ctx)) };
  },
};
