// The controller on the Raft simulator (see raft-simulation.ts). A few hundred seeds run here;
// LOGLINE_CONTROLLER_RAFT_SEEDS=5000 runs more, LOGLINE_CONTROLLER_RAFT_SEED=n replays one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeFailure, runControllerRaftSeed, type ControllerRaftStats } from './raft-simulation.js';

/** Seeds that once failed, replayed on every run. */
const REGRESSION_SEEDS: number[] = [];

const one = process.env.LOGLINE_CONTROLLER_RAFT_SEED;
const count = Number(process.env.LOGLINE_CONTROLLER_RAFT_SEEDS ?? 200);
const seeds = one !== undefined ? [Number(one)] : [...REGRESSION_SEEDS, ...Array.from({ length: count }, (_, i) => i + 1)];

test(`controller on the Raft simulator: ${seeds.length} seeds of brokers registering, heartbeating, crashing and shutting down across Raft crashes, partitions and message loss keep every invariant`, () => {
  const total: Record<string, number> = {};
  const started = Date.now();
  for (const seed of seeds) {
    const r = runControllerRaftSeed({ seed });
    if (!r.ok) assert.fail(describeFailure(r));
    for (const [k, v] of Object.entries(r.stats)) total[k] = (total[k] ?? 0) + v;
    total.raftLeaders = (total.raftLeaders ?? 0) + r.raft.leaders;
    total.raftCrashes = (total.raftCrashes ?? 0) + r.raft.crashes;
    total.snapshotInstalls = (total.snapshotInstalls ?? 0) + r.raft.snapshotInstalls;
  }
  const t = total as unknown as ControllerRaftStats & Record<string, number>;
  if (one === undefined) {
    // The schedule must exercise what the invariants are about.
    assert.ok(t.activations > seeds.length && t.fenced > 0 && t.controlledShutdowns > 0 && t.brokerCrashes > 0 && t.notController > 0
      && t.imagesCompared > 0 && t.stagedCompared > 0 && t.raftCrashes > 0, JSON.stringify(total));
  }
  console.log(`controller on Raft: ${seeds.length} seeds in ${Date.now() - started} ms: ${JSON.stringify(total)}`);
});
