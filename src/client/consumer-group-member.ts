// A member of a KIP-848 consumer group (ConsumerGroupHeartbeat), as small as `logline verify` needs:
// it joins with epoch 0, heartbeats, and hands the caller each new assignment to reconcile. The
// caller commits the positions of revoked partitions and stops reading them, then calls
// `reconciled`, and the next heartbeat tells the coordinator what the member owns (which is what
// lets the coordinator give those partitions to another member). Commits carry the member id and
// epoch, so a member the group fenced cannot move the group's offsets.
import { randomUUID } from 'node:crypto';
import { ApiKey, ErrorCode, errorName } from '../protocol/index.js';
import { ClientError } from './connection.js';
import { KafkaError } from './cluster.js';
import { Cluster, Outcome, toCoordinator } from './producer.js';

export interface GroupMemberOptions {
  /** How long the member may take to revoke partitions before the coordinator fences it. */
  rebalanceTimeoutMs: number;
  /** Server assignor (`uniform`, `range`); null: the group's default. */
  serverAssignor?: string | null;
}

/** Answers after which the member has lost its membership and joins again with epoch 0. */
const REJOIN = new Set<number>([ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID]);

/** What one heartbeat changed: the new assignment (partition indexes per topic name) or nothing; `rejoined`: the member was fenced and lost every partition. */
export interface HeartbeatResult { assignment: Map<string, number[]> | null; rejoined: boolean }

export class ConsumerGroupMember {
  /** KIP-1082: the client picks its member id (ConsumerGroupHeartbeat v1). */
  private memberId = randomUUID();
  private memberEpoch = 0;
  /** What the member reports it owns, by topic id. */
  private owned = new Map<string, number[]>();
  private topicIds = new Map<string, string>();
  private heartbeatIntervalMs = 1000;

  constructor(private readonly cluster: Cluster, readonly groupId: string, private readonly topics: readonly string[], private readonly o: GroupMemberOptions) {}

  get epoch(): number { return this.memberEpoch; }
  get id(): string { return this.memberId; }
  /** The coordinator's heartbeat interval, from its last answer. */
  get intervalMs(): number { return this.heartbeatIntervalMs; }

  /**
   * One ConsumerGroupHeartbeat. A fenced or unknown member starts over at epoch 0 (its partitions
   * are gone: `rejoined`). Retriable coordinator answers are asked again until `deadline`.
   */
  async heartbeat(deadline: number): Promise<HeartbeatResult> {
    if (this.topicIds.size < this.topics.length) await this.resolveTopicIds();
    const joining = this.memberEpoch === 0;
    let answer: any;
    const { code } = await toCoordinator(this.cluster, this.groupId, 0, deadline, async (c) => {
      answer = await c.send(ApiKey.ConsumerGroupHeartbeat, c.version(ApiKey.ConsumerGroupHeartbeat, 1), {
        groupId: this.groupId, memberId: this.memberId, memberEpoch: this.memberEpoch, instanceId: null, rackId: null,
        rebalanceTimeoutMs: joining ? this.o.rebalanceTimeoutMs : -1,
        subscribedTopicNames: joining ? [...this.topics] : null, subscribedTopicRegex: null,
        serverAssignor: joining ? (this.o.serverAssignor ?? null) : null,
        topicPartitions: [...this.owned].map(([topicId, partitions]) => ({ topicId, partitions })),
      });
      return answer.errorCode;
    });
    if (REJOIN.has(code)) {
      this.memberEpoch = 0;
      this.owned.clear();
      return { assignment: new Map(), rejoined: true };
    }
    if (code !== 0) throw new KafkaError(code, answer?.errorMessage ?? `ConsumerGroupHeartbeat: ${errorName(code)}`);
    if (answer.memberId) this.memberId = answer.memberId;
    this.memberEpoch = answer.memberEpoch;
    if (answer.heartbeatIntervalMs > 0) this.heartbeatIntervalMs = answer.heartbeatIntervalMs;
    if (answer.assignment === null) return { assignment: null, rejoined: false };
    const byName = new Map<string, number[]>();
    for (const t of answer.assignment.topicPartitions) {
      const name = [...this.topicIds].find(([, id]) => id === t.topicId)?.[0];
      if (name !== undefined) byName.set(name, [...t.partitions].sort((a: number, b: number) => a - b));
    }
    return { assignment: byName, rejoined: false };
  }

  /** The caller has taken `assignment` on (revoked partitions committed and dropped): the next heartbeat says so. */
  reconciled(assignment: ReadonlyMap<string, readonly number[]>): void {
    this.owned = new Map([...assignment].flatMap(([name, ps]) => {
      const id = this.topicIds.get(name);
      return id === undefined ? [] : [[id, [...ps]]];
    }));
  }

  /** OffsetCommit as this member (v9: member id and epoch); a stale or fenced member is refused (definite). */
  async commit(topic: string, positions: ReadonlyMap<number, number>, deadline: number): Promise<void> {
    const { code, ambiguous } = await toCoordinator(this.cluster, this.groupId, 0, deadline, async (c) => {
      const r = await c.send(ApiKey.OffsetCommit, c.version(ApiKey.OffsetCommit, 9), {
        groupId: this.groupId, generationIdOrMemberEpoch: this.memberEpoch, memberId: this.memberId, groupInstanceId: null, retentionTimeMs: -1n,
        topics: [{ name: topic, partitions: [...positions].map(([partitionIndex, offset]) => ({ partitionIndex, committedOffset: BigInt(offset), committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' })) }],
      });
      return r.topics.flatMap((t: any) => t.partitions.map((p: any) => p.errorCode)).find((e: number) => e !== 0) ?? 0;
    });
    // Refused, unless an earlier attempt's answer was lost (that one may have been written).
    if (code !== 0) throw new Outcome(`OffsetCommit: ${errorName(code)}`, !ambiguous);
  }

  /** Leaves the group (epoch -1): its partitions go to the others at once. Best effort. */
  async leave(deadline: number): Promise<void> {
    if (this.memberEpoch === 0) return;
    try {
      await toCoordinator(this.cluster, this.groupId, 0, deadline, async (c) => (await c.send(ApiKey.ConsumerGroupHeartbeat, c.version(ApiKey.ConsumerGroupHeartbeat, 1), {
        groupId: this.groupId, memberId: this.memberId, memberEpoch: -1, instanceId: null, rackId: null, rebalanceTimeoutMs: -1,
        subscribedTopicNames: null, subscribedTopicRegex: null, serverAssignor: null, topicPartitions: null,
      })).errorCode);
    } catch (err) {
      if (!(err instanceof ClientError || err instanceof Outcome || err instanceof KafkaError)) throw err;
    } finally {
      this.memberEpoch = 0;
      this.owned.clear();
    }
  }

  private async resolveTopicIds(): Promise<void> {
    for (const name of this.topics) {
      if (this.topicIds.has(name)) continue;
      const t = await this.cluster.client.topic(name);
      this.topicIds.set(name, t.topicId);
    }
  }
}

