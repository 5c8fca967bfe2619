// PartitionChangeBuilder: the one place that turns a target for a partition (its ISR, the kind of
// leader election) into the smallest PartitionChangeRecord that reaches it, or none when nothing
// would change. Elections on fencing, unfencing, controlled shutdown and unclean recovery all go
// through it, and so do reassignments: a target replica list with adding/removing replicas, and
// the completion of a running reassignment whenever the ISR it reaches holds every kept replica.
// Replay (the metadata room's mergePartitionChange) bumps the leader epoch on every leader change
// and the partition epoch on every record, so the builder only decides values.
import { maybeCompleteReassignment } from './reassignment.js';
import { effectiveMinIsr } from './min-isr.js';
import {
  LeaderRecoveryState, metadataRecord, NO_LEADER, NO_LEADER_CHANGE, NO_LEADER_RECOVERY_CHANGE,
  type MetadataRecordOf, type PartitionRegistration,
} from '../metadata/index.js';

/**
 * Kafka's PartitionChangeBuilder.Election. `preferred`: move leadership to the first replica when it
 * may lead; `online`: keep an eligible leader, else elect from the ISR; `unclean`: like online, but
 * when no ISR member may lead, a live replica outside the ISR may (it can lose committed records).
 */
export type Election = 'preferred' | 'online' | 'unclean';

export type PartitionChangeRecordOut = MetadataRecordOf<'PartitionChangeRecord'>;

export class PartitionChangeBuilder {
  private targetIsr: readonly number[];
  private targetReplicas: readonly number[];
  private targetAdding: readonly number[];
  private targetRemoving: readonly number[];
  private election: Election = 'online';
  private elrEnabled = false;
  private minIsr = 1;
  private uncleanShutdown: readonly number[] = [];

  constructor(
    private readonly partition: PartitionRegistration,
    private readonly topicId: string,
    private readonly partitionId: number,
    /** Whether a broker may lead: registered, unfenced and not in controlled shutdown. */
    private readonly isAcceptableLeader: (brokerId: number) => boolean,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.targetIsr = partition.isr;
    this.targetReplicas = partition.replicas;
    this.targetAdding = partition.addingReplicas;
    this.targetRemoving = partition.removingReplicas;
  }

  /** The replica list (a reassignment's merged list, or a revert's original one). */
  setTargetReplicas(replicas: readonly number[]): this {
    this.targetReplicas = replicas;
    return this;
  }

  setTargetAdding(adding: readonly number[]): this {
    this.targetAdding = adding;
    return this;
  }

  setTargetRemoving(removing: readonly number[]): this {
    this.targetRemoving = removing;
    return this;
  }

  setTargetIsr(isr: readonly number[]): this {
    this.targetIsr = isr;
    return this;
  }

  /** The ISR without `brokerId` (a broker fenced or shutting down). */
  removeFromTargetIsr(brokerId: number): this {
    return this.setTargetIsr(this.targetIsr.filter((b) => b !== brokerId));
  }

  setElection(election: Election): this {
    this.election = election;
    return this;
  }

  /**
   * KIP-966: keep eligible leader replicas for a topic whose min.insync.replicas is `minIsr`
   * (capped here at the target replica count). Off, the ELR fields are cleared.
   */
  setEligibleLeaderReplicas(enabled: boolean, minIsr: number): this {
    this.elrEnabled = enabled;
    this.minIsr = minIsr;
    return this;
  }

  /** Replicas that restarted after an unclean shutdown: they may have lost records, so they leave the ELR. */
  setUncleanShutdownReplicas(replicas: readonly number[]): this {
    this.uncleanShutdown = replicas;
    return this;
  }

  /** The record that reaches the target, or null when the partition already is there. */
  build(): PartitionChangeRecordOut | null {
    const p = this.partition;
    this.completeReassignmentIfNeeded();
    const replicas = this.targetReplicas;
    let isr = this.targetIsr.filter((b) => replicas.includes(b));
    let elr = this.elrEnabled ? this.targetElr(isr) : [];
    let recovery = p.leaderRecoveryState;
    let unclean = false;
    let leader = this.electFromIsr(isr);
    if (leader === NO_LEADER && this.elrEnabled && isr.length === 0) {
      // KIP-966: with the ISR empty, an ELR member holds every committed record (the high
      // watermark only moved with min ISR members in the ISR) and may lead cleanly.
      const fromElr = replicas.find((r) => elr.includes(r) && this.isAcceptableLeader(r));
      if (fromElr !== undefined) {
        this.log(`partition ${this.topicId}-${this.partitionId}: broker ${fromElr} is elected from the eligible leader replicas [${elr.join(',')}] (ISR empty)`);
        leader = fromElr;
        isr = [fromElr];
        elr = elr.filter((r) => r !== fromElr);
      } else if (elr.length === 0 && p.lastKnownElr.length === 1 && this.isAcceptableLeader(p.lastKnownElr[0]!)) {
        // Kafka 4.1's balanced recovery: with ISR and ELR empty, the last known leader is elected
        // once it is back, as before ELR; it is marked as an unclean election (it may have lost
        // unflushed records in an unclean shutdown), whatever unclean.leader.election.enable says.
        leader = p.lastKnownElr[0]!;
        this.log(`partition ${this.topicId}-${this.partitionId}: ISR and ELR are empty; the last known leader ${leader} becomes leader (recovering); records committed by the old ISR may be lost`);
        unclean = true;
      }
    }
    if (leader === NO_LEADER && this.election === 'unclean') {
      const uncleanLeader = replicas.find((r) => this.isAcceptableLeader(r));
      if (uncleanLeader !== undefined) {
        this.log(`unclean leader election for partition ${this.topicId}-${this.partitionId}: broker ${uncleanLeader} was not in the ISR [${p.isr.join(',')}] and becomes leader; records committed by the old ISR may be lost`);
        leader = uncleanLeader;
        unclean = true;
      }
    }
    if (unclean) {
      isr = [leader];
      recovery = LeaderRecoveryState.RECOVERING;
      elr = [];
    }
    // Without ELR the ISR is never left empty: the last member stays, leaderless, because it is
    // the replica that holds every committed record and the one to lead again when it returns.
    // With ELR it may empty: that replica is in the ELR then.
    if (!this.elrEnabled) {
      if (isr.length === 0) isr = p.isr.filter((b) => replicas.includes(b));
      if (isr.length === 0) isr = [...p.isr];
    }
    const lastKnownElr = this.lastKnownLeader(isr, leader);
    const isrChanged = !sameList(isr, p.isr);
    let leaderChanged = leader !== p.leader;
    // A replica leaving the assignment must stop fetching from the leader: a new leader epoch
    // (same leader) fences it (Kafka's triggerLeaderEpochBumpForReplicaReassignmentIfNeeded).
    const bumpForRemoval = !leaderChanged && p.replicas.some((r) => !replicas.includes(r));
    if (bumpForRemoval) leaderChanged = true;
    const recoveryChanged = recovery !== p.leaderRecoveryState;
    const replicasChanged = !sameList(replicas, p.replicas);
    const addingChanged = !sameList(this.targetAdding, p.addingReplicas);
    const removingChanged = !sameList(this.targetRemoving, p.removingReplicas);
    const elrChanged = !sameList(elr, p.elr);
    const lastKnownElrChanged = !sameList(lastKnownElr, p.lastKnownElr);
    if (!isrChanged && !leaderChanged && !recoveryChanged && !replicasChanged && !addingChanged && !removingChanged
      && !elrChanged && !lastKnownElrChanged) return null;
    return metadataRecord('PartitionChangeRecord', {
      partitionId: this.partitionId,
      topicId: this.topicId,
      isr: isrChanged ? isr : null,
      leader: leaderChanged ? leader : NO_LEADER_CHANGE,
      replicas: replicasChanged ? [...replicas] : null,
      removingReplicas: removingChanged ? [...this.targetRemoving] : null,
      addingReplicas: addingChanged ? [...this.targetAdding] : null,
      leaderRecoveryState: recoveryChanged ? recovery : NO_LEADER_RECOVERY_CHANGE,
      eligibleLeaderReplicas: elrChanged ? elr : null,
      lastKnownElr: lastKnownElrChanged ? [...lastKnownElr] : null,
    });
  }

  /**
   * Kafka's ELR rule: an ISR at min ISR or above has no ELR. Below it, the replicas leaving the ISR
   * join the ones already eligible (they had every record committed while they were members:
   * the high watermark needs min ISR members to move), minus the target ISR, replicas no longer
   * assigned, and replicas back from an unclean shutdown. Kept in replica order.
   */
  private targetElr(isr: readonly number[]): number[] {
    const p = this.partition;
    if (isr.length >= effectiveMinIsr(this.minIsr, this.targetReplicas.length)) return [];
    const candidates = new Set([...p.elr, ...p.isr]);
    return this.targetReplicas.filter((r) => candidates.has(r) && !isr.includes(r) && !this.uncleanShutdown.includes(r));
  }

  /**
   * lastKnownElr as Kafka 4.1 keeps it (balanced recovery): the leader at the moment the ISR
   * empties, kept while the partition has no leader, cleared once it has one again.
   */
  private lastKnownLeader(isr: readonly number[], leader: number): readonly number[] {
    const p = this.partition;
    if (!this.elrEnabled) return [];
    if (leader !== NO_LEADER) return [];
    if (isr.length === 0 && p.isr.length > 0 && p.leader !== NO_LEADER) return [p.leader];
    return p.lastKnownElr;
  }

  /** A running reassignment whose kept replicas are all in the target ISR ends in this record. */
  private completeReassignmentIfNeeded(): void {
    const done = maybeCompleteReassignment(this.targetReplicas, this.targetAdding, this.targetRemoving, this.targetIsr);
    if (done === null) return;
    this.targetReplicas = done.replicas;
    this.targetIsr = done.isr;
    this.targetAdding = [];
    this.targetRemoving = [];
  }

  private electFromIsr(isr: readonly number[]): number {
    const p = this.partition;
    const eligible = (b: number): boolean => isr.includes(b) && this.isAcceptableLeader(b);
    const replicas = this.targetReplicas;
    const preferred = replicas[0];
    if (this.election === 'preferred' && preferred !== undefined && eligible(preferred)) return preferred;
    if (p.leader !== NO_LEADER && eligible(p.leader)) return p.leader;
    // Replica order, so the preferred leader wins whenever it may lead.
    return replicas.find(eligible) ?? NO_LEADER;
  }
}

function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
