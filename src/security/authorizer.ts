// Kafka's ACL model (StandardAuthorizer): who may do what to which resource. Pure: an index is
// built from one AclsImage and never changes; a new image gives a new index. Decisions are cached
// on the index per (principal, host), so a request on a busy connection costs one map lookup and
// a changed ACL set (a new index) is seen by every open connection at once.
//
// Semantics, as Kafka's StandardAuthorizerData: a super user may do everything; otherwise the ACLs
// on the resource are those with its type and its exact name (LITERAL), the wildcard name `*`
// (LITERAL), or a prefix of its name (PREFIXED); one of them applies when its principal is the
// caller or `User:*` and its host is the caller's or `*`. A matching DENY for the operation (or
// ALL) wins over everything; else an ALLOW for the operation, ALL, or one that implies it
// (DESCRIBE by READ/WRITE/DELETE/ALTER, DESCRIBE_CONFIGS by ALTER_CONFIGS) allows; else, when no
// ACL at all names the resource, `allow.everyone.if.no.acl.found` decides (false by default).
import type { AclsImage, StandardAcl } from '../metadata/index.js';
import { limits } from '../util/index.js';

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

/** The class names that turn authorization on (KRaft's and the ZooKeeper-era one Kafka users still write). */
export const AUTHORIZER_CLASS_NAMES: readonly string[] = [
  'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
  'kafka.security.authorizer.AclAuthorizer',
];

export interface AuthorizerSettings {
  readonly superUsers: ReadonlySet<string>;
  readonly allowEveryoneIfNoAclFound: boolean;
}

/** `super.users` is semicolon-separated (principals may contain commas: User:CN=a,O=b). */
export function parseSuperUsers(value: string | null | undefined): Set<string> {
  return new Set((value ?? '').split(';').map((s) => s.trim()).filter((s) => s.length > 0));
}

/** ALLOW ACLs on these operations also allow the key's operation. */
const IMPLIED_BY: ReadonlyMap<number, readonly number[]> = new Map([
  [AclOperation.DESCRIBE, [AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER]],
  [AclOperation.DESCRIBE_CONFIGS, [AclOperation.ALTER_CONFIGS]],
]);

function allowCovers(aclOperation: number, operation: number): boolean {
  return aclOperation === AclOperation.ALL || aclOperation === operation || (IMPLIED_BY.get(operation)?.includes(aclOperation) ?? false);
}

function denyCovers(aclOperation: number, operation: number): boolean {
  return aclOperation === AclOperation.ALL || aclOperation === operation;
}

function appliesTo(acl: StandardAcl, principal: string, host: string): boolean {
  return (acl.principal === principal || acl.principal === WILDCARD_PRINCIPAL) && (acl.host === host || acl.host === WILDCARD_HOST);
}

/** The ACLs of one resource type, by literal name and by prefix. */
interface TypeIndex {
  readonly literal: Map<string, StandardAcl[]>;
  readonly prefixed: Map<string, StandardAcl[]>;
  /** The distinct lengths of the prefixes, longest first, so a lookup tries only those. */
  prefixLengths: number[];
}

export class AclIndex {
  private readonly byType = new Map<number, TypeIndex>();
  /** principal + '\n' + host → action key → allowed. */
  private readonly decisions = new Map<string, Map<string, boolean>>();
  private decisionCount = 0;

  constructor(readonly acls: AclsImage, readonly settings: AuthorizerSettings) {
    for (const acl of acls.acls.values()) {
      let t = this.byType.get(acl.resourceType);
      if (t === undefined) this.byType.set(acl.resourceType, t = { literal: new Map(), prefixed: new Map(), prefixLengths: [] });
      const table = acl.patternType === PatternType.PREFIXED ? t.prefixed : acl.patternType === PatternType.LITERAL ? t.literal : undefined;
      if (table === undefined) continue;
      let list = table.get(acl.resourceName);
      if (list === undefined) table.set(acl.resourceName, list = []);
      list.push(acl);
    }
    for (const t of this.byType.values()) t.prefixLengths = [...new Set([...t.prefixed.keys()].map((k) => k.length))].sort((a, b) => b - a);
  }

  /** May `principal` connected from `host` perform `operation` on the resource? Cached. */
  authorize(principal: string, host: string, operation: number, resourceType: number, resourceName: string): boolean {
    const who = `${principal}\n${host}`;
    let cache = this.decisions.get(who);
    const key = `${operation}:${resourceType}:${resourceName}`;
    const hit = cache?.get(key);
    if (hit !== undefined) return hit;
    const allowed = this.decide(principal, host, operation, resourceType, resourceName);
    // Bounded: past the limit the cache starts over rather than grow with every topic name a client makes up.
    if (this.decisionCount >= limits.aclDecisionsCachedMax) {
      this.decisions.clear();
      this.decisionCount = 0;
      cache = undefined;
    }
    if (cache === undefined) this.decisions.set(who, cache = new Map());
    cache.set(key, allowed);
    this.decisionCount++;
    return allowed;
  }

  /** The uncached decision. */
  decide(principal: string, host: string, operation: number, resourceType: number, resourceName: string): boolean {
    if (this.settings.superUsers.has(principal)) return true;
    let anyAcl = false;
    let allowed = false;
    for (const list of this.matching(resourceType, resourceName)) {
      anyAcl = true;
      for (const acl of list) {
        if (!appliesTo(acl, principal, host)) continue;
        if (acl.permissionType === AclPermissionType.DENY) {
          if (denyCovers(acl.operation, operation)) return false;
        } else if (acl.permissionType === AclPermissionType.ALLOW && allowCovers(acl.operation, operation)) {
          allowed = true;
        }
      }
    }
    return allowed || (!anyAcl && this.settings.allowEveryoneIfNoAclFound);
  }

  /** The non-empty ACL lists that name this resource: its literal name, the wildcard, its prefixes. */
  private *matching(resourceType: number, resourceName: string): Generator<StandardAcl[]> {
    const t = this.byType.get(resourceType);
    if (t === undefined) return;
    const exact = t.literal.get(resourceName);
    if (exact !== undefined) yield exact;
    if (resourceName !== WILDCARD_RESOURCE) {
      const wildcard = t.literal.get(WILDCARD_RESOURCE);
      if (wildcard !== undefined) yield wildcard;
    }
    for (const n of t.prefixLengths) {
      if (n > resourceName.length) continue;
      const list = t.prefixed.get(resourceName.slice(0, n));
      if (list !== undefined) yield list;
    }
  }

  /**
   * May `principal` perform `operation` on some resource of this type (Kafka's
   * authorizeByResourceType, used for IDEMPOTENT_WRITE's "WRITE on any topic")? Allowed when an
   * applicable ALLOW names a pattern that no applicable DENY covers (a DENY on the wildcard, or on
   * a literal name or prefix that the ALLOW's pattern starts with).
   */
  authorizeAny(principal: string, host: string, operation: number, resourceType: number): boolean {
    if (this.settings.superUsers.has(principal)) return true;
    const t = this.byType.get(resourceType);
    if (t === undefined) return this.settings.allowEveryoneIfNoAclFound;
    const denyLiteral = new Set<string>();
    const denyPrefix: string[] = [];
    const allows: { name: string; prefixed: boolean }[] = [];
    for (const [table, prefixed] of [[t.literal, false], [t.prefixed, true]] as const) {
      for (const [name, list] of table) {
        for (const acl of list) {
          if (!appliesTo(acl, principal, host)) continue;
          if (acl.permissionType === AclPermissionType.DENY && denyCovers(acl.operation, operation)) {
            if (prefixed) denyPrefix.push(name); else denyLiteral.add(name);
          } else if (acl.permissionType === AclPermissionType.ALLOW && allowCovers(acl.operation, operation)) {
            allows.push({ name, prefixed });
          }
        }
      }
    }
    if (denyLiteral.has(WILDCARD_RESOURCE)) return false;
    return allows.some((a) => {
      if (denyPrefix.some((p) => a.name.startsWith(p))) return false;
      return a.prefixed || a.name === WILDCARD_RESOURCE || !denyLiteral.has(a.name);
    });
  }
}

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

/**
 * The broker's authorizer: the index of the ACLs in the current image, rebuilt only when the
 * image's ACLs change (images reuse an untouched AclsImage, so identity says it).
 */
export class StandardAuthorizer {
  private index: AclIndex;

  constructor(readonly settings: AuthorizerSettings, acls: AclsImage) {
    this.index = new AclIndex(acls, settings);
  }

  indexFor(acls: AclsImage): AclIndex {
    if (this.index.acls !== acls) this.index = new AclIndex(acls, this.settings);
    return this.index;
  }
}

/** The authorizer `authorizer.class.name` asks for, or null when authorization is off. */
export function authorizerFromConfig(className: string | null | undefined, superUsers: string | null | undefined,
  allowEveryoneIfNoAclFound: boolean, acls: AclsImage): StandardAuthorizer | null {
  if (className === null || className === undefined || className === '') return null;
  if (!AUTHORIZER_CLASS_NAMES.includes(className)) throw new Error(`authorizer.class.name=${className}: only ${AUTHORIZER_CLASS_NAMES.join(' or ')} is available`);
  return new StandardAuthorizer({ superUsers: parseSuperUsers(superUsers), allowEveryoneIfNoAclFound }, acls);
}
