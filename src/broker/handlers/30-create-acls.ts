// CreateAcls (key 30), v0-3. Each creation is checked (INVALID_REQUEST for a bad binding: unknown
// or filter-only codes, an empty name, a cluster not named kafka-cluster, ...) and stored by the
// active controller as an AccessControlEntryRecord; creating one that exists succeeds and writes
// nothing. Needs ALTER on the cluster; SECURITY_DISABLED without an authorizer.
// v0 (dropped by Kafka 4.0, KIP-896, kept for older clients) has no pattern types: its filters
// and bindings are LITERAL (the schema's default), so it sees and changes literal ACLs only.
import { ErrorCode, type CreateAclsRequest } from '../../protocol/index.js';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../../metadata/index.js';
import type { HandlerSpec } from '../context.js';
import { forwardedFor } from '../envelope.js';
import type { AclServices } from '../services.js';

export const createAclsHandler: HandlerSpec<AclServices, 30> = {
  apiKey: 30,
  minVersion: 0,
  maxVersion: 3,
  async handle(request: CreateAclsRequest, ctx) {
    const all = (errorCode: number, errorMessage: string | null) => ({ throttleTimeMs: 0, results: request.creations.map(() => ({ errorCode, errorMessage })) });
    if (!ctx.services.aclAdmin.enabled) return all(ErrorCode.SECURITY_DISABLED, 'No authorizer is configured (authorizer.class.name).');
    if (ctx.authz !== undefined && !ctx.authz.allowed(AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, null);
    return { throttleTimeMs: 0, results: await ctx.services.controller.createAcls(request.creations, forwardedFor(ctx)) };
  },
};
