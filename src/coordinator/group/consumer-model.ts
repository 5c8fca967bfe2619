// The KIP-848 consumer group model (Kafka's ConsumerGroup / ConsumerGroupMember): the group epoch
// bumps whenever membership or subscriptions change; the target assignment is computed by a
// server-side assignor at that epoch; each member reconciles towards its target, giving up
// partitions before anyone else gets them (revoke before assign).

/** topic id → sorted partitions. */
export type TopicPartitions = Map<string, number[]>;

export type ConsumerGroupState = 'Empty' | 'Assigning' | 'Reconciling' | 'Stable' | 'Dead';
/** Kafka's MemberState: 0 stable, 1 unrevoked partitions, 2 unreleased partitions. */
export type MemberState = 0 | 1 | 2;

export interface ConsumerMember {
  memberId: string;
  memberEpoch: number;
  previousMemberEpoch: number;
  state: MemberState;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  rebalanceTimeoutMs: number;
  serverAssignor: string | null;
  assigned: TopicPartitions;
  pendingRevocation: TopicPartitions;
}

export interface ConsumerGroup {
  readonly kind: 'consumer';
  readonly groupId: string;
  groupEpoch: number;
  assignmentEpoch: number;
  readonly members: Map<string, ConsumerMember>;
  /** member id → target assignment at assignmentEpoch. */
  readonly targetAssignment: Map<string, TopicPartitions>;
  /** The topics and partition counts the target was computed for (topic id → name, count). */
  subscriptionMetadata: Map<string, { name: string; partitions: number }>;
  /** Set when a deletion tombstone is written. */
  dead: boolean;
}

export function newConsumerGroup(groupId: string): ConsumerGroup {
  return { kind: 'consumer', groupId, groupEpoch: 0, assignmentEpoch: 0, members: new Map(), targetAssignment: new Map(), subscriptionMetadata: new Map(), dead: false };
}

export function consumerGroupState(g: ConsumerGroup): ConsumerGroupState {
  if (g.dead) return 'Dead';
  if (g.members.size === 0) return 'Empty';
  if (g.assignmentEpoch < g.groupEpoch) return 'Assigning';
  for (const m of g.members.values()) if (m.memberEpoch !== g.groupEpoch || m.state !== 0) return 'Reconciling';
  return 'Stable';
}
