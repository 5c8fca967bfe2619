// KIP-848 consumer groups on the shard: ConsumerGroupHeartbeat drives membership, the group epoch
// and the target assignment (computed by a server-side assignor), and each member's reconciliation
// towards its target: partitions still owned by another member are held back until that member
// has revoked them (revoke before assign). Every change is a record; replay rebuilds the groups.
import { ErrorCode } from '../../protocol/index.js';
import { ClassicGroupShard } from './shard.js';
import { newConsumerGroup, type ConsumerGroup, type ConsumerMember, type TopicPartitions } from './consumer-model.js';
import type { GroupRecord } from './records.js';

const toList = (tp: TopicPartitions) => [...tp].map(([topicId, partitions]) => ({ topicId, partitions }));
const fromList = (list: { topicId: string; partitions: number[] }[]): TopicPartitions =>
  new Map(list.map((x) => [x.topicId, [...x.partitions].sort((a, b) => a - b)]));

export class ConsumerGroupShard extends ClassicGroupShard {
  protected consumerGroup(groupId: string, create: boolean): ConsumerGroup | undefined {
    const g = this.groups.get(groupId);
    if (g?.kind === 'consumer') return g;
    if (!create) return undefined;
    const fresh = newConsumerGroup(groupId);
    this.groups.set(groupId, fresh);
    return fresh;
  }

  protected override replayConsumerRecord(r: GroupRecord): void {
    switch (r.type) {
      case 'consumer-group': {
        if (r.value === null) {
          const g = this.consumerGroup(r.group, false);
          if (g) { g.dead = true; this.groups.delete(r.group); }
          return;
        }
        this.consumerGroup(r.group, true)!.groupEpoch = r.value.epoch;
        return;
      }
      case 'consumer-partition-metadata': {
        const g = this.consumerGroup(r.group, r.value !== null);
        if (g) g.subscriptionMetadata = new Map((r.value?.topics ?? []).map((t) => [t.topicId, { name: t.topicName, partitions: t.numPartitions }]));
        return;
      }
      case 'consumer-member': return this.replayMemberMetadata(r);
      case 'consumer-target-metadata': {
        const g = this.consumerGroup(r.group, r.value !== null);
        if (g) g.assignmentEpoch = r.value?.assignmentEpoch ?? 0;
        return;
      }
      case 'consumer-target-member': {
        const g = this.consumerGroup(r.group, r.value !== null);
        if (!g) return;
        if (r.value === null) g.targetAssignment.delete(r.memberId);
        else g.targetAssignment.set(r.memberId, fromList(r.value.topicPartitions));
        return;
      }
      case 'consumer-current-member': {
        const g = this.consumerGroup(r.group, r.value !== null);
        const m = g?.members.get(r.memberId);
        if (!m || r.value === null) return;
        m.memberEpoch = r.value.memberEpoch;
        m.previousMemberEpoch = r.value.previousMemberEpoch;
        m.state = r.value.state as 0 | 1 | 2;
        m.assigned = fromList(r.value.assignedPartitions);
        m.pendingRevocation = fromList(r.value.partitionsPendingRevocation);
        return;
      }
      default: return;
    }
  }

  private replayMemberMetadata(r: Extract<GroupRecord, { type: 'consumer-member' }>): void {
    const g = this.consumerGroup(r.group, r.value !== null);
    if (!g) return;
    if (r.value === null) { g.members.delete(r.memberId); return; }
    const v = r.value;
    const existing = g.members.get(r.memberId);
    const m: ConsumerMember = existing ?? {
      memberId: r.memberId, memberEpoch: 0, previousMemberEpoch: 0, state: 0, instanceId: null, rackId: null, clientId: '', clientHost: '',
      subscribedTopicNames: [], subscribedTopicRegex: null, rebalanceTimeoutMs: -1, serverAssignor: null, assigned: new Map(), pendingRevocation: new Map(),
    };
    m.instanceId = v.instanceId;
    m.rackId = v.rackId;
    m.clientId = v.clientId;
    m.clientHost = v.clientHost;
    m.subscribedTopicNames = v.subscribedTopicNames;
    m.subscribedTopicRegex = v.subscribedTopicRegex;
    m.rebalanceTimeoutMs = v.rebalanceTimeoutMs;
    m.serverAssignor = v.serverAssignor;
    g.members.set(r.memberId, m);
  }

  /** Kafka's deletion order: assignments first, the group epoch last. */
  protected emitConsumerGroupTombstones(g: ConsumerGroup): void {
    g.dead = true;
    for (const id of g.members.keys()) this.emit({ type: 'consumer-current-member', group: g.groupId, memberId: id, value: null });
    for (const id of g.targetAssignment.keys()) this.emit({ type: 'consumer-target-member', group: g.groupId, memberId: id, value: null });
    this.emit({ type: 'consumer-target-metadata', group: g.groupId, value: null });
    for (const id of g.members.keys()) this.emit({ type: 'consumer-member', group: g.groupId, memberId: id, value: null });
    this.emit({ type: 'consumer-partition-metadata', group: g.groupId, value: null });
    this.emit({ type: 'consumer-group', group: g.groupId, value: null });
  }

  protected currentAssignmentRecord(g: ConsumerGroup, m: ConsumerMember): GroupRecord {
    return {
      type: 'consumer-current-member', group: g.groupId, memberId: m.memberId,
      value: { memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch, state: m.state, assignedPartitions: toList(m.assigned), partitionsPendingRevocation: toList(m.pendingRevocation) },
    };
  }

  protected validateConsumerCommit(g: ConsumerGroup, memberId: string, memberEpoch: number): number {
    if (g.dead) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    if (memberEpoch < 0 && memberId === '') return g.members.size === 0 ? ErrorCode.NONE : ErrorCode.UNKNOWN_MEMBER_ID;
    const m = g.members.get(memberId);
    if (!m) return ErrorCode.UNKNOWN_MEMBER_ID;
    if (memberEpoch > m.memberEpoch) return ErrorCode.FENCED_MEMBER_EPOCH;
    if (memberEpoch < m.memberEpoch) return ErrorCode.STALE_MEMBER_EPOCH;
    return ErrorCode.NONE;
  }

  protected validateConsumerFetch(g: ConsumerGroup, memberId: string, memberEpoch: number): number {
    const m = g.members.get(memberId);
    if (!m) return ErrorCode.UNKNOWN_MEMBER_ID;
    return memberEpoch !== m.memberEpoch ? ErrorCode.STALE_MEMBER_EPOCH : ErrorCode.NONE;
  }
}
