import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { runSeed } from '../../src/raft/index.js';
import { ddmin, minimizeSeed, violationKind } from '../../src/raft/sim/minimize.js';
import { formatChaosEvent, parseSchedule } from '../../src/raft/sim/sim.js';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'raft', 'sim', 'cli.js');

test('ddmin finds the two items that together cause a failure', () => {
  const items = Array.from({ length: 40 }, (_, i) => i);
  let calls = 0;
  const minimal = ddmin(items, (s) => { calls++; return s.includes(3) && s.includes(31); });
  assert.deepEqual(minimal, [3, 31]);
  assert.ok(calls < 200, `${calls} calls`);
});

test('a recorded chaos schedule replayed with its seed gives the same run', () => {
  for (const seed of [3, 42, 1439]) {
    const a = runSeed({ seed, traceLength: 0 });
    const b = runSeed({ seed, traceLength: 0, schedule: a.schedule });
    // Steps differ only by the chaos draws that did nothing (they are not in the schedule).
    assert.deepEqual({ ...b.stats, steps: 0 }, { ...a.stats, steps: 0 }, `seed ${seed}`);
    assert.deepEqual(parseSchedule(a.schedule.map(formatChaosEvent).join(';')), a.schedule);
  }
});

/** The first seed that fails with the deliberate bug of acknowledging appends before their fsync. */
function failingSeed(): number {
  for (let seed = 1; seed <= 100; seed++) {
    const r = runSeed({ seed, traceLength: 0, bug: 'ack-before-fsync' });
    if (!r.ok && r.schedule.length >= 8) return seed;
  }
  throw new Error('the injected bug was never caught');
}

test('an injected bug is caught and minimised to a shorter schedule that still reproduces it', () => {
  const seed = failingSeed();
  assert.equal(runSeed({ seed, traceLength: 0 }).ok, true, 'without the bug the seed passes');
  const m = minimizeSeed({ seed, bug: 'ack-before-fsync' }, { timeMs: 60_000 });
  assert.ok(m !== undefined);
  assert.ok(m.schedule.length < m.originalEvents, `${m.schedule.length} of ${m.originalEvents} events`);
  const replay = runSeed({ seed, bug: 'ack-before-fsync', schedule: m.schedule, driverCrashes: m.driverCrashes, traceLength: 0 });
  assert.equal(replay.ok, false);
  assert.equal(violationKind(replay.violation!), violationKind(m.violation));
  assert.equal(runSeed({ seed, schedule: m.schedule, driverCrashes: m.driverCrashes, traceLength: 0 }).ok, true,
    'the minimal schedule passes without the bug');
});

test('the sim cli prints the minimised schedule as a replay command that reproduces the failure', () => {
  const seed = failingSeed();
  const out = spawnSync(process.execPath, [cli, '--seed', String(seed), '--bug', 'ack-before-fsync'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(out.status, 1, out.stderr);
  const minimised = /minimised: (\d+) of (\d+) chaos events/.exec(out.stderr);
  assert.ok(minimised !== null, out.stderr.slice(0, 2000));
  assert.ok(Number(minimised[1]) < Number(minimised[2]));
  const replay = /^replay: (npm run sim -- .*--schedule '([^']*)')$/m.exec(out.stderr);
  assert.ok(replay !== null, 'a replay command is printed');
  const args = replay[1]!.replace(/^npm run sim -- /, '').replace(/--schedule '[^']*'/, '').trim().split(/\s+/);
  const again = spawnSync(process.execPath, [cli, ...args, '--schedule', replay[2]!, '--no-minimize'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(again.status, 1, 'the printed command fails again');
  assert.match(again.stderr, /violated an invariant/);
});
