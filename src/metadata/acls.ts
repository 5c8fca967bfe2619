// Kafka's ACL vocabulary (resource, pattern, operation and permission codes) and the binding
// filters of the ACL admin APIs: shared by the controller, which stores ACLs, and the broker's
// authorizer (src/security), which reads them.
import type { StandardAcl } from './security.js';

/** Kafka's org.apache.kafka.common.resource.ResourceType codes. */
export const ResourceType = { UNKNOWN: 0, ANY: 1, TOPIC: 2, GROUP: 3, CLUSTER: 4, TRANSACTIONAL_ID: 5, DELEGATION_TOKEN: 6, USER: 7 } as const;
/** Kafka's PatternType codes; ANY and MATCH are for filters only. */
export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
/** Kafka's AclOperation codes. */
export const AclOperation = {
  UNKNOWN: 0, ANY: 1, ALL: 2, READ: 3, WRITE: 4, CREATE: 5, DELETE: 6, ALTER: 7, DESCRIBE: 8, CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10, ALTER_CONFIGS: 11, IDEMPOTENT_WRITE: 12, CREATE_TOKENS: 13, DESCRIBE_TOKENS: 14,
} as const;
/** Kafka's AclPermissionType codes. */
export const AclPermissionType = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;

/** The name of the one CLUSTER resource. */
export const CLUSTER_RESOURCE_NAME = 'kafka-cluster';
export const WILDCARD_RESOURCE = '*';
export const WILDCARD_PRINCIPAL = 'User:*';
export const WILDCARD_HOST = '*';

/** An ACL binding or filter as the admin APIs carry it. */
export interface AclBindingFilter {
  resourceType: number;
  resourceName: string | null;
  patternType: number;
  principal: string | null;
  host: string | null;
  operation: number;
  permissionType: number;
}

/** Why a binding cannot be stored (Kafka's INVALID_REQUEST cases), or null. */
export function invalidBinding(b: AclBindingFilter): string | null {
  if (b.resourceType <= ResourceType.ANY || b.resourceType > ResourceType.USER) return `invalid resource type ${b.resourceType}`;
  if (b.patternType !== PatternType.LITERAL && b.patternType !== PatternType.PREFIXED) return `invalid pattern type ${b.patternType}`;
  if (b.operation <= AclOperation.ANY || b.operation > AclOperation.DESCRIBE_TOKENS) return `invalid operation ${b.operation}`;
  if (b.permissionType !== AclPermissionType.ALLOW && b.permissionType !== AclPermissionType.DENY) return `invalid permission type ${b.permissionType}`;
  if (b.resourceName === null || b.resourceName.length === 0) return 'resource name must not be empty';
  if (b.principal === null || !/^[^:]+:.+$/.test(b.principal)) return `invalid principal ${b.principal}`;
  if (b.host === null || b.host.length === 0) return 'host must not be empty';
  if (b.resourceType === ResourceType.CLUSTER && b.resourceName !== CLUSTER_RESOURCE_NAME) return `the cluster resource is named ${CLUSTER_RESOURCE_NAME}`;
  if (b.patternType === PatternType.PREFIXED && b.resourceName === WILDCARD_RESOURCE) return 'a PREFIXED pattern may not be the wildcard';
  return null;
}

/** Why a filter is malformed (unknown codes), or null. */
export function invalidFilter(f: AclBindingFilter): string | null {
  if (f.resourceType === ResourceType.UNKNOWN || f.resourceType > ResourceType.USER) return `invalid resource type ${f.resourceType}`;
  if (f.patternType === PatternType.UNKNOWN || f.patternType > PatternType.PREFIXED) return `invalid pattern type ${f.patternType}`;
  if (f.operation === AclOperation.UNKNOWN || f.operation > AclOperation.DESCRIBE_TOKENS) return `invalid operation ${f.operation}`;
  if (f.permissionType === AclPermissionType.UNKNOWN || f.permissionType > AclPermissionType.ALLOW) return `invalid permission type ${f.permissionType}`;
  return null;
}

/**
 * Does a stored ACL match a filter (Kafka's AclBindingFilter.matches)? Null fields and ANY match
 * everything; pattern type MATCH matches the ACLs that would apply to the named resource: the
 * literal name, the wildcard, and every prefix of it.
 */
export function filterMatches(f: AclBindingFilter, acl: StandardAcl): boolean {
  if (f.resourceType !== ResourceType.ANY && f.resourceType !== acl.resourceType) return false;
  if (f.principal !== null && f.principal !== acl.principal) return false;
  if (f.host !== null && f.host !== acl.host) return false;
  if (f.operation !== AclOperation.ANY && f.operation !== acl.operation) return false;
  if (f.permissionType !== AclPermissionType.ANY && f.permissionType !== acl.permissionType) return false;
  switch (f.patternType) {
    case PatternType.ANY:
      return f.resourceName === null || f.resourceName === acl.resourceName;
    case PatternType.MATCH:
      if (f.resourceName === null) return true;
      if (acl.patternType === PatternType.LITERAL) return acl.resourceName === f.resourceName || acl.resourceName === WILDCARD_RESOURCE;
      return acl.patternType === PatternType.PREFIXED && f.resourceName.startsWith(acl.resourceName);
    default:
      return f.patternType === acl.patternType && (f.resourceName === null || f.resourceName === acl.resourceName);
  }
}

