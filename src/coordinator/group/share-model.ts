// The share group model (Kafka's ShareGroup / ShareGroupMember): the group epoch bumps whenever
// membership, subscriptions or the subscribed topics change; the target assignment is computed at
// that epoch, and a member takes its target at once (a partition may be shared, so nothing is
// revoked first).
import type { TopicPartitions } from './consumer-model.js';

export interface ShareMember {
  memberId: string;
  memberEpoch: number;
  previousMemberEpoch: number;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  assigned: TopicPartitions;
}

export interface ShareGroup {
  readonly kind: 'share';
  readonly groupId: string;
  groupEpoch: number;
  assignmentEpoch: number;
  readonly members: Map<string, ShareMember>;
  readonly targetAssignment: Map<string, TopicPartitions>;
  subscriptionMetadata: Map<string, { name: string; partitions: number }>;
  /**
   * The share-partitions the group has state for (Kafka's ShareGroupStatePartitionMetadata
   * initializedTopics): every partition of a topic it has subscribed to, or whose offsets were
   * altered, until its offsets or the group are deleted. What DescribeShareGroupOffsets lists and
   * what deleting the group deletes from the share coordinator.
   */
  initializedTopics: Map<string, { name: string; partitions: number[] }>;
  dead: boolean;
}

export type ShareGroupState = 'Empty' | 'Stable' | 'Dead';
export const shareGroupState = (g: ShareGroup): ShareGroupState => (g.dead ? 'Dead' : g.members.size === 0 ? 'Empty' : 'Stable');

