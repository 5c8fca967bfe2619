// Partition reassignment's replica arithmetic (Kafka's PartitionReassignmentReplicas and
// PartitionReassignmentRevert). A reassignment first widens the replica set to target ∪ current
// (target order first, then the replicas being removed), with addingReplicas / removingReplicas
// saying which are which; it completes once every remaining replica is in the ISR; a cancel goes
// back to the replicas minus the ones being added.
import type { PartitionRegistration } from '../metadata/index.js';

export interface ReassignmentReplicas {
  /** The replica list while the reassignment runs: the target, then the replicas being removed. */
  readonly merged: readonly number[];
  readonly adding: readonly number[];
  readonly removing: readonly number[];
}

/** The replica lists that move `current` towards `target`. */
export function reassignmentReplicas(current: readonly number[], target: readonly number[]): ReassignmentReplicas {
  const removing = current.filter((r) => !target.includes(r));
  return { merged: [...target, ...removing], adding: target.filter((r) => !current.includes(r)), removing };
}

export function isReassigning(p: Pick<PartitionRegistration, 'addingReplicas' | 'removingReplicas'>): boolean {
  return p.addingReplicas.length > 0 || p.removingReplicas.length > 0;
}

/**
 * Kafka's maybeCompleteReassignment: with the ISR about to be `isr`, a running reassignment is
 * done when the replicas it keeps are all in the ISR and at least one of them is; the result is
 * the final replica list and the ISR without the removed replicas. Null when it is not done.
 */
export function maybeCompleteReassignment(replicas: readonly number[], adding: readonly number[], removing: readonly number[],
  isr: readonly number[]): { replicas: number[]; isr: number[] } | null {
  if (adding.length === 0 && removing.length === 0) return null;
  const newIsr = isr.filter((r) => !removing.includes(r));
  if (newIsr.length === 0) return null;
  const newReplicas = replicas.filter((r) => !removing.includes(r));
  if (!newReplicas.every((r) => newIsr.includes(r))) return null;
  return { replicas: newReplicas, isr: newIsr };
}

/**
 * Kafka's PartitionReassignmentRevert: the replicas before the reassignment (without the ones
 * being added) and the ISR among them. `unclean` when none of them is in the ISR: reverting then
 * needs an unclean election, and the ISR becomes the whole original replica list.
 */
export function reassignmentRevert(p: PartitionRegistration): { replicas: number[]; isr: number[]; unclean: boolean } {
  const replicas = p.replicas.filter((r) => !p.addingReplicas.includes(r));
  const isr = p.isr.filter((r) => replicas.includes(r));
  return isr.length === 0 ? { replicas, isr: [...replicas], unclean: true } : { replicas, isr, unclean: false };
}
