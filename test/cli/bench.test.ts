// `logline bench` as a user runs it against a broker: produce (one and two producer threads, with
// compression and idempotence), catch-up consume with and without a group, e2e, the JSON summary's
// shape, and a missed target rate. Counts, shapes and exit codes only: benchmarks are not timed tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';

const BIN = 'bin/logline.js';
const PERCENTILES = ['avg', 'p50', 'p95', 'p99', 'p99.9', 'max'];

test('bench produce, consume and e2e report what they did; a missed target rate exits 1', { timeout: 180_000 }, async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config: parseBrokerConfig({ 'node.id': '1' }), dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const bench = async (...args: string[]) => {
    const r = await runProcess(process.execPath, [BIN, 'bench', ...args, '--bootstrap-server', bootstrap, '--max-seconds', '60'], null, 90_000);
    return { code: r.code, err: r.stderr, json: () => JSON.parse(r.stdout) };
  };
  try {
    // Whether a loaded machine reaches the target rate is not this test's question: only that the
    // summary says so and the exit code agrees with it.
    const one = await bench('produce', '--topic', 'b1', '--partitions', '3', '--num-records', '3001', '--batch-size', '100', '--record-size', '100', '--throughput', '2500', '--json');
    const s1 = one.json();
    assert.equal(s1.mode, 'produce');
    assert.equal(s1.error, undefined, one.err);
    assert.equal(one.code, s1.targetReached ? 0 : 1, one.err);
    assert.equal(s1.records, 3001, 'exactly the records asked for, the last batch partial');
    assert.equal(s1.targetRecordsPerSec, 2500);
    assert.deepEqual(Object.keys(s1.latencyMs), PERCENTILES);
    assert.ok(s1.latencyMs.p50 <= s1.latencyMs.p99 && s1.latencyMs.p99 <= s1.latencyMs.max);
    assert.ok(s1.recordsPerSec > 0 && s1.mbPerSec > 0);
    // At 2500 records/s the run lasts over a second, so at least one progress line; the first may
    // come before a worker's first report (a loaded machine), so its count may still be 0.
    const lines = one.err.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
    assert.ok(lines.length >= 1, one.err);
    assert.ok(lines.every((l) => l.progress === 'produce' && 'latencyMsP99' in l && 'inFlight' in l), 'with --json, progress lines on stderr are JSON too');
    const counts = lines.map((l) => l.records as number);
    assert.ok(counts.every((n, i) => n >= (counts[i - 1] ?? 0) && n <= 3001), `records so far: ${counts}`);

    const two = await bench('produce', '--topic', 'b1', '--producers', '2', '--num-records', '4001', '--batch-size', '50', '--record-size', '64',
      '--compression', 'lz4', '--acks', '-1', '--idempotence', '--json', '--quiet');
    assert.equal(two.code, 0, two.err);
    const s2 = two.json();
    assert.deepEqual([s2.producers, s2.records, s2.compression, s2.idempotence], [2, 4001, 'lz4', true]);
    assert.ok(s2.wireMbPerSec < s2.mbPerSec, 'lz4 batches are smaller than their records');

    const all = await bench('consume', '--topic', 'b1', '--json', '--quiet');
    assert.equal(all.code, 0, all.err);
    assert.deepEqual([all.json().mode, all.json().records], ['consume', 7002], 'every record of both runs, up to the high watermarks');
    const grouped = await bench('consume', '--topic', 'b1', '--group', 'bench-readers', '--num-records', '5000', '--json', '--quiet');
    assert.equal(grouped.json().records, 5000);
    const rest = await bench('consume', '--topic', 'b1', '--group', 'bench-readers', '--json', '--quiet');
    assert.equal(rest.json().records, 7002 - 5000, 'the group resumes from its committed offsets');

    const e2e = await bench('e2e', '--topic', 'b2', '--partitions', '2', '--num-records', '2000', '--throughput', '2000', '--record-size', '32', '--json', '--quiet');
    const s3 = e2e.json();
    assert.equal(s3.error, undefined, e2e.err);
    assert.equal(e2e.code, s3.targetReached ? 0 : 1, e2e.err);
    assert.deepEqual([s3.mode, s3.records, s3.consumed], ['e2e', 2000, 2000]);
    assert.deepEqual(Object.keys(s3.e2eLatencyMs), PERCENTILES);
    assert.ok(s3.e2eLatencyMs.max > 0);

    // A warm-up of 1 s at 2000 records/s: 2000 more records are sent and read, and only the 2000
    // after it count in the latencies (the producer by due time, the consumer by send time from the
    // first record it reads).
    const warm = await bench('e2e', '--topic', 'b3', '--partitions', '2', '--num-records', '2000', '--throughput', '2000', '--warmup-seconds', '1',
      '--record-size', '32', '--json', '--quiet');
    const s4 = warm.json();
    assert.equal(s4.error, undefined, warm.err);
    assert.deepEqual([s4.records, s4.consumed, s4.warmupSeconds, s4.warmupRecords, s4.latencyRecords, s4.e2eLatencyRecords], [4000, 4000, 1, 2000, 2000, 2000]);
    assert.equal((await bench('produce', '--warmup-seconds', '1')).code, 2, 'a warm-up needs a target rate');

    // 100 million records/s from one connection with one request in flight is out of any machine's reach.
    const missed = await bench('produce', '--topic', 'b1', '--num-records', '2000', '--batch-size', '10', '--in-flight', '1', '--throughput', '100000000', '--json', '--quiet');
    assert.equal(missed.code, 1);
    assert.equal(missed.json().targetReached, false);
    assert.match(missed.err, /target of 100000000 records\/s was not reached/);

    const usage = await bench('produce', '--compression', 'brotli');
    assert.equal(usage.code, 2);
    assert.equal((await bench('e2e', '--record-size', '4')).code, 2, 'e2e needs room for the send time');
  } finally {
    await server.close();
  }
});
