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
import {
  AclOperation, AclPermissionType, PatternType, WILDCARD_HOST, WILDCARD_PRINCIPAL, WILDCARD_RESOURCE, type AclsImage, type StandardAcl,
} from '../metadata/index.js';
import { limits } from '../util/index.js';

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
  /** principal → host → its rights, with the decisions made for it so far (two maps: no string is built per request). */
  private readonly callers = new Map<string, Map<string, AclCaller>>();
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

  /** The rights of `principal` connected from `host`, with a decision cache shared by every request of that caller on this index. */
  bind(principal: string, host: string): AclCaller {
    let byHost = this.callers.get(principal);
    if (byHost === undefined) this.callers.set(principal, byHost = new Map());
    let caller = byHost.get(host);
    if (caller === undefined) byHost.set(host, caller = new AclCaller(this, principal, host));
    return caller;
  }

  /** May `principal` connected from `host` perform `operation` on the resource? Cached. */
  authorize(principal: string, host: string, operation: number, resourceType: number, resourceName: string): boolean {
    return this.bind(principal, host).allowed(operation, resourceType, resourceName);
  }

  /** Counts a cached decision; past the limit every cache starts over rather than grow with each topic name a client makes up. */
  countDecision(): void {
    if (++this.decisionCount <= limits.aclDecisionsCachedMax) return;
    this.callers.clear();
    this.decisionCount = 0;
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

/** One caller's rights on one index: what a request checks, one map lookup per decision after the first. */
export class AclCaller {
  /** By operation and resource type (operation * 8 + type), then resource name. */
  private readonly decisions: (Map<string, boolean> | undefined)[] = [];

  constructor(private readonly index: AclIndex, readonly principal: string, readonly host: string) {}

  allowed(operation: number, resourceType: number, resourceName: string): boolean {
    const slot = operation * 8 + resourceType;
    let byName = this.decisions[slot];
    const hit = byName?.get(resourceName);
    if (hit !== undefined) return hit;
    const allowed = this.index.decide(this.principal, this.host, operation, resourceType, resourceName);
    if (byName === undefined) this.decisions[slot] = byName = new Map();
    byName.set(resourceName, allowed);
    this.index.countDecision();
    return allowed;
  }

  allowedAny(operation: number, resourceType: number): boolean {
    return this.index.authorizeAny(this.principal, this.host, operation, resourceType);
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
