// Replica placement: round-robin over the brokers, interleaving racks when `broker.rack` is set so
// that a partition's replicas land on different racks where possible. The first replica is the
// preferred leader; leaders spread evenly because the start shifts with each partition.
import { assert } from '../util/index.js';

export interface PlacementBroker {
  id: number;
  rack: string | null;
}

/** Brokers ordered so that consecutive entries alternate racks (Kafka's rack-alternated list). */
export function rackAlternated(brokers: PlacementBroker[]): PlacementBroker[] {
  const sorted = [...brokers].sort((a, b) => a.id - b.id);
  if (sorted.every((b) => b.rack === null)) return sorted;
  const byRack = new Map<string, PlacementBroker[]>();
  for (const b of sorted) {
    const r = b.rack ?? '';
    if (!byRack.has(r)) byRack.set(r, []);
    byRack.get(r)!.push(b);
  }
  const racks = [...byRack.keys()].sort();
  const out: PlacementBroker[] = [];
  for (let i = 0; out.length < sorted.length; i++) {
    for (const r of racks) {
      const b = byRack.get(r)![i];
      if (b) out.push(b);
    }
  }
  return out;
}

/**
 * Replica lists for partitions [firstPartition, firstPartition + count). `startIndex` picks the
 * broker of the first partition's leader (the controller passes a random one).
 */
export function placeReplicas(brokers: PlacementBroker[], count: number, replicationFactor: number, startIndex: number, firstPartition = 0): number[][] {
  assert(replicationFactor >= 1 && replicationFactor <= brokers.length, `replication factor ${replicationFactor} with ${brokers.length} brokers`);
  const ordered = rackAlternated(brokers);
  const n = ordered.length;
  const out: number[][] = [];
  for (let i = 0; i < count; i++) {
    const p = firstPartition + i;
    const first = (startIndex + p) % n;
    // Followers shift by a per-round offset so the same pairs do not always share partitions.
    const shift = 1 + (Math.floor(p / n) % Math.max(1, n - 1));
    const replicas = [ordered[first]!.id];
    const racksUsed = new Set([ordered[first]!.rack]);
    const rackCount = new Set(ordered.map((b) => b.rack)).size;
    for (let r = 1; r < replicationFactor; r++) {
      // Walk from the shifted position; take the first broker on an unused rack while racks remain.
      const from = (first + shift + r - 1) % n;
      let pick: PlacementBroker | undefined;
      for (let k = 0; k < n && !pick; k++) {
        const b = ordered[(from + k) % n]!;
        if (!replicas.includes(b.id) && (racksUsed.size >= rackCount || !racksUsed.has(b.rack))) pick = b;
      }
      assert(pick !== undefined, 'placement ran out of brokers');
      replicas.push(pick.id);
      racksUsed.add(pick.rack);
    }
    out.push(replicas);
  }
  return out;
}
