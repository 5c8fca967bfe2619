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

// The root-only faults: each node in its own network namespace (an isolated node is cut off from
// the other nodes, clients still reach it) and on its own small tmpfs (a filled disk is below
// log.dir.min.free.bytes, so its leaders refuse produce and its followers pause), with the
// consumer-group workload rebalancing beside them. The faults come in turn (isolate, then disk-full),
// so both happen even when a loaded machine leaves time for only two of the four.
const notRoot = process.getuid?.() !== 0 ? 'isolate and disk-full need root (ip netns, mount -t tmpfs); CI runs as root' : false;

test('verify --cluster 3 --workload group with isolate and disk-full faults: the faults happen, no anomaly', { skip: notRoot, timeout: 180_000 }, async () => {
  const r = await runVerify({
    client: { bootstrap: 'unused' },
    workload: { ...WORKLOAD_DEFAULTS, consumerMode: 'group', consumers: 3, opsMax: 4000, durationMs: 20_000, seed: 12, finalReadTimeoutMs: 40_000 },
    cluster: { nodes: 3 },
    nemesis: { faults: ['isolate', 'disk-full'], intervalMs: 1500, durationMs: 3000, faultsMax: 4, seed: 6, order: 'cycle' },
  });
  assert.equal(r.report.valid, true, JSON.stringify(r.report.classes.filter((c) => c.count > 0), null, 1));
  const faults = r.history.filter((op) => op.process === -1 && op.type !== 'invoke');
  const kinds = faults.map((op) => op.f);
  assert.ok(kinds.includes('isolate') && kinds.includes('rejoin') && kinds.includes('fill-disk') && kinds.includes('free-disk'), `faults: ${kinds.join(', ')}`);
  const failed = faults.filter((op) => op.error !== undefined);
  assert.deepEqual(failed, [], 'every fault step worked');
  assert.ok(r.report.stats.sends.ok > 100, JSON.stringify(r.report.stats));
  assert.ok(r.history.some((op) => op.f === 'commit' && op.type === 'ok') && r.history.some((op) => op.f === 'assign' && op.group !== undefined), 'the group members committed and were assigned partitions');
  assert.equal(r.history.filter((op) => op.f === 'final').at(-1)!.type, 'ok');
});
