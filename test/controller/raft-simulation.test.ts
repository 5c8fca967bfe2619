// The controller on the Raft simulator (see raft-simulation.ts). A few hundred seeds run here;
// LOGLINE_CONTROLLER_RAFT_SEEDS=5000 runs more (a soak: every failing seed is listed, the first
// with its trace), LOGLINE_CONTROLLER_RAFT_SEED=n replays one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeFailure, runControllerRaftSeed, type ControllerRaftBug, type ControllerRaftResult } from './raft-simulation.js';

/** Seeds that once failed, replayed on every run. */
const REGRESSION_SEEDS: number[] = [];

const one = process.env.LOGLINE_CONTROLLER_RAFT_SEED;
const count = Number(process.env.LOGLINE_CONTROLLER_RAFT_SEEDS ?? 300);
const seeds = one !== undefined ? [Number(one)] : [...REGRESSION_SEEDS, ...Array.from({ length: count }, (_, i) => i + 1)];

test(`controller on the Raft simulator: ${seeds.length} seeds of brokers registering, heartbeating, crashing and shutting down and an admin creating topics, across Raft leader crashes, partitions and message loss, keep every invariant`, () => {
  const total: Record<string, number> = {};
  const failed: ControllerRaftResult[] = [];
  const started = Date.now();
  for (const seed of seeds) {
    const r = runControllerRaftSeed({ seed });
    if (!r.ok) failed.push(r);
    for (const [k, v] of Object.entries(r.stats)) total[k] = (total[k] ?? 0) + v;
    total.raftLeaders = (total.raftLeaders ?? 0) + r.raft.leaders;
    total.raftCrashes = (total.raftCrashes ?? 0) + r.raft.crashes;
    total.snapshotInstalls = (total.snapshotInstalls ?? 0) + r.raft.snapshotInstalls;
  }
  console.log(`controller on Raft: ${seeds.length} seeds in ${Date.now() - started} ms, ${failed.length} failed: ${JSON.stringify(total)}`);
  if (failed.length > 0) {
    assert.fail(`${failed.length} seeds failed: ${failed.map((r) => r.seed).join(',')}\n${describeFailure(failed[0]!)}`);
  }
  if (one === undefined) {
    // The schedules must exercise what the invariants are about.
    for (const k of ['fenced', 'controlledShutdowns', 'brokerCrashes', 'notController', 'imagesCompared', 'stagedCompared', 'raftCrashes', 'snapshotInstalls', 'topicsCreated', 'topicsDeleted']) {
      assert.ok(total[k]! > 0, `${k}: ${JSON.stringify(total)}`);
    }
    assert.ok(total.activations! > seeds.length, 'failovers happen');
  }
});

test('the same seed gives the same run', () => {
  const a = runControllerRaftSeed({ seed: 7 });
  const b = runControllerRaftSeed({ seed: 7 });
  assert.deepEqual(a.stats, b.stats);
  assert.deepEqual(a.raft, b.raft);
});

/** Runs seeds with a deliberate bug until `failures` of them broke an invariant; returns their violations. */
function violationsWith(bug: ControllerRaftBug, failures: number): string[] {
  const out: string[] = [];
  for (let seed = 1; seed <= 60 && out.length < failures; seed++) {
    const r = runControllerRaftSeed({ seed, bug });
    if (!r.ok) out.push(r.violation!);
  }
  return out;
}

test('the invariants catch a controller that activates before its epoch start is committed (it writes on a stale image)', () => {
  const violations = violationsWith('activate-before-epoch-start', 5);
  assert.equal(violations.length, 5, 'the bug breaks an invariant within 60 seeds');
  // What breaks: the committed image differs from what the active controller replayed for the same
  // batch, the committed log does not replay, or the image itself is wrong (a fenced or shut-down leader).
  for (const v of violations) {
    assert.match(v, /differs from what the active controller replayed|replaying the batch|leader is (fenced|in controlled shutdown)|not in the ISR|went from/, v);
  }
});

test('the invariants catch a controller that answers before its records are committed', () => {
  const violations = violationsWith('answer-before-commit', 5);
  assert.equal(violations.length, 5, 'the bug breaks an invariant within 60 seeds');
  for (const v of violations) assert.match(v, /committed image/, v);
});

test('the invariants catch a snapshot that loses a record (a node restored from it differs from the others at the same offset)', () => {
  const violations = violationsWith('snapshot-loses-last-record', 3);
  assert.equal(violations.length, 3, 'the bug breaks an invariant within 60 seeds');
  for (const v of violations) assert.match(v, /image at offset \d+ differs from another node's|replaying the batch|committed image/, v);
});
