// DescribeAcls (key 29), v0-3. Answers from this
// broker's image, ACLs grouped by resource pattern, with Kafka's filter semantics (ANY and MATCH
// pattern types, null fields match everything). Needs DESCRIBE on the cluster;
// SECURITY_DISABLED without an authorizer.
// v0 (dropped by Kafka 4.0, KIP-896, kept for older clients) has no pattern types: its filters
// and bindings are LITERAL (the schema's default), so it sees and changes literal ACLs only.
import { ErrorCode, type DescribeAclsRequest, type DescribeAclsResponseDescribeAclsResource } from '../../protocol/index.js';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType, filterMatches, invalidFilter } from '../../metadata/index.js';
import type { HandlerSpec } from '../context.js';
import type { AclServices } from '../services.js';

export const describeAclsHandler: HandlerSpec<AclServices, 29> = {
  apiKey: 29,
  minVersion: 0,
  maxVersion: 3,
  handle(request: DescribeAclsRequest, ctx) {
    const fail = (errorCode: number, errorMessage: string | null = null) => ({ throttleTimeMs: 0, errorCode, errorMessage, resources: [] });
    if (!ctx.services.aclAdmin.enabled) return fail(ErrorCode.SECURITY_DISABLED, 'No authorizer is configured (authorizer.class.name).');
    if (ctx.authz !== undefined && !ctx.authz.allowed(AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME)) return fail(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    const filter = { resourceType: request.resourceTypeFilter, resourceName: request.resourceNameFilter, patternType: request.patternTypeFilter,
      principal: request.principalFilter, host: request.hostFilter, operation: request.operation, permissionType: request.permissionType };
    const why = invalidFilter(filter);
    if (why !== null) return fail(ErrorCode.INVALID_REQUEST, why);
    const byResource = new Map<string, DescribeAclsResponseDescribeAclsResource>();
    for (const a of ctx.services.aclAdmin.acls().acls.values()) {
      if (!filterMatches(filter, a)) continue;
      const key = `${a.resourceType}\n${a.patternType}\n${a.resourceName}`;
      let r = byResource.get(key);
      if (r === undefined) byResource.set(key, r = { resourceType: a.resourceType, resourceName: a.resourceName, patternType: a.patternType, acls: [] });
      r.acls.push({ principal: a.principal, host: a.host, operation: a.operation, permissionType: a.permissionType });
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, resources: [...byResource.values()] };
  },
};
