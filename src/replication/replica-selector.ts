// Follower fetching (KIP-392): which replica a consumer should read a partition from. The leader
// asks its replica selector (`replica.selector.class`) on each consumer fetch that carries client
// metadata (Fetch v11+); a selected replica other than the leader goes back to the consumer as
// preferredReadReplica, and the consumer fetches from it until it errs or the metadata changes.
// Kafka's two selectors are here under their class names: LeaderSelector, and
// RackAwareReplicaSelector (a replica in the consumer's rack, the leader when it is one of them,
// else the most caught-up of them). Pure: the replica manager builds the views.

/** What a consumer's Fetch tells the selector about it (Kafka's ClientMetadata). */
export interface ClientMetadata {
  /** Fetch v11+ RackId (client.rack); '' when the consumer set none. */
  readonly rackId: string;
  /** The listener the fetch arrived on: replicas are named by their endpoint on it. */
  readonly listenerName: string;
}

/** One replica the consumer could read from (Kafka's ReplicaView). */
export interface ReplicaView {
  readonly brokerId: number;
  readonly rack: string | null;
  readonly logEndOffset: number;
  readonly timeSinceLastCaughtUpMs: number;
}

/** The candidates: the leader and the followers eligible to serve the fetch (Kafka's PartitionView). */
export interface PartitionView {
  readonly leader: ReplicaView;
  /** The eligible replicas, the leader among them. */
  readonly replicas: readonly ReplicaView[];
}

/** Kafka's ReplicaSelector: the replica to read from, or null for no preference. */
export interface ReplicaSelector {
  readonly className: string;
  select(client: ClientMetadata, partition: PartitionView): ReplicaView | null;
}

/** Kafka's ReplicaView.comparator: larger log end offset, then caught up more recently, then larger id. */
function moreCaughtUp(a: ReplicaView, b: ReplicaView): boolean {
  if (a.logEndOffset !== b.logEndOffset) return a.logEndOffset > b.logEndOffset;
  if (a.timeSinceLastCaughtUpMs !== b.timeSinceLastCaughtUpMs) return a.timeSinceLastCaughtUpMs < b.timeSinceLastCaughtUpMs;
  return a.brokerId > b.brokerId;
}

export const LEADER_SELECTOR: ReplicaSelector = Object.freeze({
  className: 'org.apache.kafka.common.replica.LeaderSelector',
  select: (_client: ClientMetadata, partition: PartitionView) => partition.leader,
});

export const RACK_AWARE_REPLICA_SELECTOR: ReplicaSelector = Object.freeze({
  className: 'org.apache.kafka.common.replica.RackAwareReplicaSelector',
  select(client: ClientMetadata, partition: PartitionView): ReplicaView | null {
    if (client.rackId === '') return partition.leader;
    let best: ReplicaView | null = null;
    for (const r of partition.replicas) {
      if (r.rack !== client.rackId) continue;
      // The leader in the consumer's rack wins over any follower there.
      if (r.brokerId === partition.leader.brokerId) return partition.leader;
      if (best === null || moreCaughtUp(r, best)) best = r;
    }
    return best ?? partition.leader;
  },
});

/**
 * The selector `replica.selector.class` names, or null when unset (consumers then read from the
 * leader, though followers still serve a consumer that comes to them). An unknown class is a
 * configuration error, as Kafka fails to instantiate it at startup.
 */
export function replicaSelectorFor(className: string | null): ReplicaSelector | null {
  if (className === null || className === '') return null;
  for (const s of [LEADER_SELECTOR, RACK_AWARE_REPLICA_SELECTOR]) if (s.className === className) return s;
  throw new Error(`replica.selector.class: unknown class ${className} (known: ${LEADER_SELECTOR.className}, ${RACK_AWARE_REPLICA_SELECTOR.className})`);
}
