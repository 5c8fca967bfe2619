// `logline plan` reproduces the worked example (an order platform: 150 MB/s peak, 60 MB/s
// average, 7 days, 2 consumer groups, RF 3, 9 brokers, 24 h local window) as the arithmetic, as the
// table a user reads and as --json, and suggests a broker count when --brokers is left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planRows, sizingPlan, suggestBrokers, type PlanInput } from '../../src/cli/plan.js';
import { runProcess } from '../broker/process-helpers.js';

const BIN = 'bin/logline.js';
const EXAMPLE: PlanInput = { peakMbPerSec: 150, averageMbPerSec: 60, retentionDays: 7, consumerGroups: 2, replicationFactor: 3, brokers: 9, localRetentionHours: 24 };
const EXAMPLE_ARGS = ['plan', '--peak-mb-per-sec', '150', '--average-mb-per-sec', '60', '--retention-days', '7', '--consumer-groups', '2',
  '--replication-factor', '3', '--brokers', '9', '--local-retention-hours', '24'];

const near = (actual: number | null, expected: number, what: string) =>
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-9 * Math.max(1, Math.abs(expected)), `${what}: ${actual} ≠ ${expected}`);

test('the worked example: 450 MB/s of disk writes, 150/300/300 MB/s of network, 36.3 TB per copy, 108.9 TB in all, 12.1 TB per broker, 15.6 TB local, 50 MB/s per broker, +12.5% after a loss', () => {
  const p = sizingPlan(EXAMPLE);
  assert.equal(p.brokers, 9);
  assert.equal(p.brokersSuggested, false);
  near(p.diskWritesPeakMbPerSec, 450, 'disk writes at peak');
  near(p.networkInPeakMbPerSec, 150, 'network in');
  near(p.networkReplicationPeakMbPerSec, 300, 'replication');
  near(p.networkOutPeakMbPerSec, 300, 'out to consumers');
  near(p.storagePerCopyTb, 36.288, 'per copy: 60 MB/s × 86400 s × 7 days');
  near(p.storageAllReplicasTb, 108.864, 'all replicas');
  near(p.storagePerBrokerTb, 12.096, 'per broker');
  near(p.localWindowTb, 15.552, 'local window: 60 MB/s × 86400 s × 3');
  assert.ok(p.localWindowPerBrokerTb! < 2, 'under 2 TB per broker');
  near(p.writePerBrokerPeakMbPerSec, 50, 'write load per broker');
  near(p.oneBrokerLossIncreasePct, 12.5, 'one broker lost');
  near(p.writePerBrokerAfterLossPeakMbPerSec, 56.25, 'each survivor');
});

test('the table shows each number rounded as the example states it and names the rate it uses', () => {
  const rows = new Map(planRows(EXAMPLE, sizingPlan(EXAMPLE)).map((r) => [r.item, r]));
  const value = (item: string) => rows.get(item)?.value;
  assert.equal(value('disk writes at peak (cluster)'), '450 MB/s');
  assert.equal(value('network in (producers)'), '150 MB/s');
  assert.equal(value('network replication'), '300 MB/s');
  assert.equal(value('network out to consumers'), '300 MB/s');
  assert.equal(value('storage per replica copy'), '36.3 TB');
  assert.equal(value('storage with all replicas'), '108.9 TB');
  assert.equal(value('storage per broker'), '12.1 TB');
  assert.equal(value('local window (tiered storage)'), '15.6 TB');
  assert.equal(value('local window per broker'), '1.7 TB');
  assert.equal(value('write load per broker at peak'), '50 MB/s');
  assert.equal(value('one broker lost'), '+12.5%');
  assert.match(rows.get('disk writes at peak (cluster)')!.basis, /^peak 150 MB\/s/);
  assert.match(rows.get('storage per replica copy')!.basis, /^average 60 MB\/s/);
  assert.match(rows.get('local window (tiered storage)')!.basis, /^average 60 MB\/s × 3600 s × 24 h × RF 3/);
});

test('without --brokers: the fewest brokers that absorb the peak within the per-broker budget with one lost, never fewer than RF', () => {
  // 450 MB/s at 60 MB/s each needs 8 brokers; one more to lose: the example's 9.
  const p = sizingPlan({ ...EXAMPLE, brokers: undefined });
  assert.equal(p.brokers, 9);
  assert.equal(p.brokersSuggested, true);
  assert.ok(p.writePerBrokerAfterLossPeakMbPerSec <= 60, 'the survivors stay within the budget');
  assert.equal(suggestBrokers(450, 3, 100), 6);
  assert.equal(suggestBrokers(3, 3, 60), 3, 'a small workload still needs RF brokers');
  assert.equal(sizingPlan({ ...EXAMPLE, brokers: undefined, brokerWriteMbPerSecMax: 75 }).brokers, 7, '450/75 = 6, + 1');
});

test('logline plan prints the table and --json; bad flags exit 2', { timeout: 60_000 }, async () => {
  const shown = await runProcess(process.execPath, [BIN, ...EXAMPLE_ARGS]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^ITEM\s+VALUE\s+BASIS/);
  assert.match(shown.stdout, /disk writes at peak \(cluster\)\s+450 MB\/s/);
  assert.match(shown.stdout, /storage with all replicas\s+108\.9 TB/);
  assert.match(shown.stdout, /one broker lost\s+\+12\.5%/);
  const json = await runProcess(process.execPath, [BIN, ...EXAMPLE_ARGS, '--json']);
  assert.equal(json.code, 0, json.stderr);
  const p = JSON.parse(json.stdout);
  assert.equal(p.brokers, 9);
  near(p.storagePerCopyTb, 36.288, 'json per copy');
  near(p.localWindowTb, 15.552, 'json local window');
  const suggested = await runProcess(process.execPath, [BIN, 'plan', '--peak-mb-per-sec', '150', '--average-mb-per-sec', '60', '--retention-days', '7']);
  assert.equal(suggested.code, 0, suggested.stderr);
  assert.match(suggested.stdout, /brokers\s+9\s+suggested: /);
  const missing = await runProcess(process.execPath, [BIN, 'plan', '--peak-mb-per-sec', '150']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--average-mb-per-sec is required/);
});
