// Who may do what on the registry when the broker's authorizer is on: Karapace's model (a
// subject's read and write, and the global config's read and write; write implies read) decided
// by Kafka ACLs. Kafka has no subject resource type, so each registry resource is mapped onto
// one Kafka already has (README.md says why):
//
//   subject <topic>-key, <topic>-value   read: DESCRIBE on TOPIC <topic>     write: WRITE on TOPIC <topic>
//   any other subject (record names)     read: DESCRIBE on CLUSTER           write: ALTER on CLUSTER
//   global config and mode               read: DESCRIBE_CONFIGS on CLUSTER   write: ALTER_CONFIGS on CLUSTER
//
// Kafka's implications do the rest: READ or WRITE on a topic imply DESCRIBE, so a producer
// allowed to write a topic may register its schemas and a consumer allowed to read it may fetch
// them. Pure: the node supplies the decision function over its authorizer.
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../security/index.js';

export type Access = 'read' | 'write';

/** One authorizer decision (the broker's StandardAuthorizer over its latest ACLs). */
export type AclDecision = (principal: string, host: string, operation: number, resourceType: number, resourceName: string) => boolean;

/** The Kafka resource and operation a registry access is decided on. */
export interface AclTarget { resourceType: number; resourceName: string; operation: number }

const TOPIC_SUBJECT = /^(.+)-(key|value)$/;

/** The ACL target of reading or writing `subject`. */
export function subjectTarget(subject: string, access: Access): AclTarget {
  const m = TOPIC_SUBJECT.exec(subject);
  if (m) return { resourceType: ResourceType.TOPIC, resourceName: m[1]!, operation: access === 'read' ? AclOperation.DESCRIBE : AclOperation.WRITE };
  return { resourceType: ResourceType.CLUSTER, resourceName: CLUSTER_RESOURCE_NAME, operation: access === 'read' ? AclOperation.DESCRIBE : AclOperation.ALTER };
}

/** The ACL target of reading or writing the global config and mode. */
export function globalTarget(access: Access): AclTarget {
  return { resourceType: ResourceType.CLUSTER, resourceName: CLUSTER_RESOURCE_NAME, operation: access === 'read' ? AclOperation.DESCRIBE_CONFIGS : AclOperation.ALTER_CONFIGS };
}

/** A caller's decisions (its principal and address bound). */
export class RegistryCaller {
  constructor(readonly principal: string, readonly host: string, private readonly decide: AclDecision | null) {}

  /** No authorizer: every access is allowed, so none needs to be looked at. */
  get unrestricted(): boolean { return this.decide === null; }

  allowed(t: AclTarget): boolean {
    return this.decide === null || this.decide(this.principal, this.host, t.operation, t.resourceType, t.resourceName);
  }

  mayUseSubject(subject: string, access: Access): boolean { return this.allowed(subjectTarget(subject, access)); }
  mayUseGlobal(access: Access): boolean { return this.allowed(globalTarget(access)); }
}
