// `logline verify --cluster 3` as runVerify does it: three `logline server` processes it formats
// and starts itself, a node killed and restarted and a node paused and resumed while the workload
// runs, and nothing acknowledged lost, duplicated or read out of order. Bounded to about a minute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WORKLOAD_DEFAULTS, runVerify } from '../../src/verify/index.js';

test('verify --cluster 3 with kills and pauses: the faults happen, the workload goes on, no anomaly', { timeout: 150_000 }, async () => {
  const r = await runVerify({
    client: { bootstrap: 'unused' },
    workload: { ...WORKLOAD_DEFAULTS, opsMax: 4000, durationMs: 16_000, seed: 11, finalReadTimeoutMs: 40_000 },
    cluster: { nodes: 3 },
    nemesis: { faults: ['kill', 'pause'], intervalMs: 1500, durationMs: 2500, faultsMax: 3, seed: 5 },
  });
  assert.equal(r.report.valid, true, JSON.stringify(r.report.classes.filter((c) => c.count > 0), null, 1));
  const faults = r.history.filter((op) => op.process === -1 && op.type !== 'invoke').map((op) => op.f);
  assert.ok(faults.length >= 4, `faults: ${faults.join(', ')}`);
  assert.ok(faults.includes('kill') || faults.includes('pause'));
  const lastFaultMs = Math.max(...r.history.filter((op) => op.process === -1).map((op) => op.timeMs));
  const firstFaultMs = Math.min(...r.history.filter((op) => op.process === -1).map((op) => op.timeMs));
  assert.ok(r.history.some((op) => op.f === 'send' && op.type === 'ok' && op.timeMs > firstFaultMs && op.timeMs < lastFaultMs), 'sends were acknowledged between the faults');
  assert.ok(r.report.stats.sends.ok > 100, JSON.stringify(r.report.stats));
  assert.equal(r.history.filter((op) => op.f === 'final').at(-1)!.type, 'ok');
});
