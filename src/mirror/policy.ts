// Replication policies: how a mirrored topic is named on the target and which topics are remote,
// internal or would close a cycle. DefaultReplicationPolicy prefixes the source alias
// (`A.orders`), IdentityReplicationPolicy keeps the name (and so cannot tell a mirrored topic
// from a local one: a cycle guard needs the default policy, as with MirrorMaker 2).
export interface ReplicationPolicy {
  readonly name: 'DefaultReplicationPolicy' | 'IdentityReplicationPolicy';
  /** The topic's name on the target of a flow from `sourceAlias`. */
  formatRemoteTopic(sourceAlias: string, topic: string): string;
  /** The alias of the cluster a remote topic came from, or null for a local topic. */
  topicSource(topic: string): string | null;
  /** The topic's name one hop upstream, or null for a local topic. */
  upstreamTopic(topic: string): string | null;
  offsetSyncsTopic(clusterAlias: string): string;
  checkpointsTopic(clusterAlias: string): string;
  heartbeatsTopic(): string;
  /** MirrorMaker 2's own topics (offset syncs, checkpoints, its Connect offsets). */
  isMM2InternalTopic(topic: string): boolean;
}

export const HEARTBEATS_TOPIC = 'heartbeats';

class DefaultReplicationPolicy implements ReplicationPolicy {
  readonly name: ReplicationPolicy['name'] = 'DefaultReplicationPolicy';
  /** The separator of the internal topics' names (`.` unless the separator is used for them too). */
  protected readonly internal: string;

  constructor(protected readonly separator: string, internalSeparatorEnabled: boolean) {
    this.internal = internalSeparatorEnabled ? separator : '.';
  }

  formatRemoteTopic(sourceAlias: string, topic: string): string {
    return `${sourceAlias}${this.separator}${topic}`;
  }

  topicSource(topic: string): string | null {
    const at = topic.indexOf(this.separator);
    // Java's String.split drops trailing empty strings: "A." has no second part, so it is local.
    if (at < 0 || at + this.separator.length >= topic.length) return null;
    return topic.slice(0, at);
  }

  upstreamTopic(topic: string): string | null {
    const source = this.topicSource(topic);
    return source === null ? null : topic.slice(source.length + this.separator.length);
  }

  offsetSyncsTopic(clusterAlias: string): string { return `mm2-offset-syncs${this.internal}${clusterAlias}${this.internal}internal`; }
  checkpointsTopic(clusterAlias: string): string { return `${clusterAlias}${this.internal}checkpoints${this.internal}internal`; }
  heartbeatsTopic(): string { return HEARTBEATS_TOPIC; }
  isMM2InternalTopic(topic: string): boolean { return topic.endsWith(`${this.internal}internal`); }
}

/**
 * Remote topics keep their names. Only heartbeats are renamed (`A.heartbeats`), so each cluster's
 * heartbeats stay apart and RemoteClusterUtils can still find the upstream clusters.
 */
class IdentityReplicationPolicy extends DefaultReplicationPolicy {
  override readonly name: ReplicationPolicy['name'] = 'IdentityReplicationPolicy';

  override formatRemoteTopic(sourceAlias: string, topic: string): string {
    return topic === HEARTBEATS_TOPIC ? super.formatRemoteTopic(sourceAlias, topic) : topic;
  }

  override topicSource(topic: string): string | null {
    return topic.endsWith(`${this.separator}${HEARTBEATS_TOPIC}`) ? super.topicSource(topic) : null;
  }

  override upstreamTopic(topic: string): string | null {
    return topic.endsWith(`${this.separator}${HEARTBEATS_TOPIC}`) ? super.upstreamTopic(topic) : null;
  }
}

const POLICY_PACKAGE = 'org.apache.kafka.connect.mirror.';

/** The policy `replication.policy.class` names (its full Java class name, or the short one). */
export function policyFromConfig(className: string, separator: string, internalSeparatorEnabled: boolean): ReplicationPolicy {
  const short = className.trim().startsWith(POLICY_PACKAGE) ? className.trim().slice(POLICY_PACKAGE.length) : className.trim();
  if (separator === '') throw new Error('replication.policy.separator may not be empty');
  if (short === 'DefaultReplicationPolicy') return new DefaultReplicationPolicy(separator, internalSeparatorEnabled);
  if (short === 'IdentityReplicationPolicy') return new IdentityReplicationPolicy(separator, internalSeparatorEnabled);
  throw new Error(`"${className}" is not a policy this engine has (${POLICY_PACKAGE}DefaultReplicationPolicy or ${POLICY_PACKAGE}IdentityReplicationPolicy)`);
}

/** The name a topic had where it was first written, however many hops it was mirrored. */
export function originalTopic(policy: ReplicationPolicy, topic: string): string {
  for (let name = topic, hops = 0; hops < 64; hops++) {
    const up = policy.upstreamTopic(name);
    if (up === null || up === name) return name;
    name = up;
  }
  return topic;
}

export function isHeartbeatsTopic(policy: ReplicationPolicy, topic: string): boolean {
  return originalTopic(policy, topic) === policy.heartbeatsTopic();
}

/** Topics that are never mirrored: MM2's own and the clusters' (`__consumer_offsets`, `.internal` names). */
export function isInternalTopic(policy: ReplicationPolicy, topic: string): boolean {
  return policy.isMM2InternalTopic(topic) || topic.startsWith('__') || topic.startsWith('.') || topic.endsWith('.internal') || topic.endsWith('-internal');
}

/**
 * A topic that came from the target (directly or through other clusters): mirroring it there
 * again would close a loop (A.orders on B must not go back to A as B.A.orders).
 */
export function isCycle(policy: ReplicationPolicy, targetAlias: string, topic: string): boolean {
  for (let name = topic, hops = 0; hops < 64; hops++) {
    const source = policy.topicSource(name);
    if (source === null) return false;
    if (source === targetAlias) return true;
    const up = policy.upstreamTopic(name);
    if (up === null || up === name) return false;
    name = up;
  }
  return true; // 64 hops of prefixes: no real topology, refuse it
}
