import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSeed } from '../../src/raft/index.js';
import { formatChaosEvent, parseSchedule } from '../../src/raft/sim/sim.js';

// A failure found here goes in as a scenario file (test/raft/scenarios/, see the raft README): a
// seed stops giving the run that failed as soon as the simulator's random choices change, a
// scenario does not. The seeds once kept here (1439, 1771, 2176) are scenarios now, and still
// among the seeds swept below.

// 1,000 in `npm test`; LOGLINE_RAFT_SIM_SEEDS for a longer sweep by hand.
const seedCount = Number(process.env.LOGLINE_RAFT_SIM_SEEDS ?? 1000);

test(`simulation: ${seedCount} seeds keep every invariant and recover after healing`, () => {
  const failures: string[] = [];
  let committed = 0;
  let crashes = 0;
  let installs = 0;
  let voterChanges = 0;
  let keptDown = 0;
  let keepDownSkipped = 0;
  for (let seed = 1; seed <= seedCount; seed++) {
    const r = runSeed({ seed, traceLength: 0 });
    committed += r.stats.committed;
    crashes += r.stats.crashes;
    installs += r.stats.snapshotInstalls;
    voterChanges += r.stats.voterChanges;
    keptDown += r.stats.keptDown;
    keepDownSkipped += r.stats.keepDownSkipped;
    if (!r.ok) failures.push(`seed ${seed} step ${r.failedStep}: ${r.violation} (npm run sim -- --seed ${seed})`);
  }
  assert.deepEqual(failures, []);
  // The schedule must actually exercise the system, or passing means nothing.
  assert.ok(committed > seedCount * 10, `only ${committed} entries committed`);
  assert.ok(crashes > seedCount, `only ${crashes} crashes`);
  assert.ok(installs > seedCount / 2, `only ${installs} snapshot installs`);
  // KIP-853: about a third of the seeds add and remove voters (the leader too) under the same faults.
  assert.ok(voterChanges > seedCount / 2, `only ${voterChanges} voter changes`);
  // A dead-for-good leader is still the common case; only a voter change in flight spares it.
  assert.ok(keptDown > seedCount / 5, `only ${keptDown} runs with a node kept down`);
  assert.ok(keepDownSkipped < keptDown / 10, `${keepDownSkipped} keep-downs skipped against ${keptDown} kept`);
});

test('simulation: no node is kept down while a voter change is in flight (seed 206549, src/raft/README.md)', () => {
  // The minimised schedule of the soak's one stall: n3's uncommitted add-voter n4 when n2, the
  // last leader, would be lost for good. All nodes come back instead, and a proposal commits.
  const schedule = parseSchedule('@1031 network drop=0.2 dup=0.1 delay=50;@1483 propose n3 x1;@2218 propose n3 x3;'
    + '@2394 snapshot n2;@2627 snapshot n3;@5390 add-voter n4;@7956 partition 1,2,3;@9121 resign;'
    + '@10053 crash n2 keep=0 restart=+267;@15000 keep-down n2');
  const r = runSeed({ seed: 206549, driverCrashes: false, schedule, traceLength: 0 });
  assert.equal(r.ok, true, r.violation);
  assert.equal(r.stats.keepDownSkipped, 1);
  assert.equal(r.stats.keptDown, 0);
});

test('simulation: the same seed gives the same run', () => {
  const a = runSeed({ seed: 42, traceLength: 0 });
  const b = runSeed({ seed: 42, traceLength: 0 });
  assert.deepEqual(a.stats, b.stats);
});

test('simulation: a step limit stops the run early without a liveness verdict', () => {
  const r = runSeed({ seed: 7, maxSteps: 50, traceLength: 0 });
  assert.equal(r.ok, true);
  assert.equal(r.stats.steps, 50);
});

test('simulation: voter changes replay from a written schedule', () => {
  // Seed 1 has 3 voters and a node 4 that does not vote; the schedule adds 4, then removes 1 (the leader, if it
  // still leads), under the seed's own network and crashes.
  const schedule = parseSchedule('@3000 add-voter n4;@3600 propose n1 x2;@5000 remove-voter n1;@5600 propose n2 x1');
  assert.equal(schedule.map(formatChaosEvent).join(';'), '@3000 add-voter n4;@3600 propose n1 x2;@5000 remove-voter n1;@5600 propose n2 x1');
  const r = runSeed({ seed: 1, traceLength: 0, schedule });
  assert.equal(r.violation, undefined);
  assert.deepEqual([r.voters, r.observers, r.stats.voterChanges], [3, 1, 2], 'both changes were accepted');
});
