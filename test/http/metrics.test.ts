// /metrics on a single node as an operator reads it: error codes counted per API and code, a
// consumer's long poll seen in the fetch purgatory, log flush times, a kcat consumer group counted
// by state with its rebalance, Node's event-loop utilization, the latency histogram's shape, and the
// same scrape as OpenMetrics when the scraper asks for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startServer } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode, apiInfo } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { toOpenMetrics, wantsOpenMetrics } from '../../src/http/index.js';
import { runProcess, until, within } from '../broker/process-helpers.js';
import { sample } from './scrape.js';

const hasKcat = spawnSync('kcat', ['-V']).status === 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const batch = (values: string[]) => buildRecordBatchSync({ records: values.map((v) => ({ key: null, value: Buffer.from(v) })) });

test('a single node counts error codes per API, shows a long poll in the fetch purgatory, flush times, a consumer group by state with its rebalance, and answers OpenMetrics on request', { timeout: 120_000 }, async () => {
  const server = await startServer({
    listeners: ['PLAINTEXT://127.0.0.1:0'],
    config: parseBrokerConfig({ 'node.id': '1', listeners: 'PLAINTEXT://127.0.0.1:0', 'http.listener': '127.0.0.1:0', 'group.initial.rebalance.delay.ms': '0' }),
  });
  const port = server.http!.port;
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const client = new ClusterClient({ bootstrap });
  const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  try {
    await until(20_000, 'ready', async () => ((await fetch(`http://127.0.0.1:${port}/v1/ready`)).status === 200 ? true : undefined));
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 't', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    await client.topic('t');
    const conn = await client.leaderFor('t', 0);
    const produce = (partition: number, values: string[]) => conn.send(ApiKey.Produce, 9, {
      transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: 't', partitionData: [{ index: partition, records: batch(values) }] }],
    });

    // One good write, one to a partition that does not exist: each error code counted once.
    assert.equal((await produce(0, ['a', 'b'])).responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    assert.equal((await produce(7, ['x'])).responses[0].partitionResponses[0].errorCode, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    let s = await scrape();
    assert.equal(sample(s, 'kafka_network_requestmetrics_errors_total', { request: 'Produce', error: 'NONE' }), 1);
    assert.equal(sample(s, 'kafka_network_requestmetrics_errors_total', { request: 'Produce', error: 'UNKNOWN_TOPIC_OR_PARTITION' }), 1);
    assert.equal(sample(s, 'kafka_network_requestmetrics_requests_total', { request: 'Produce', version: '9' }), 2);
    // The latency histogram per API and version: cumulative buckets ending at the request count.
    const buckets = s.split('\n').filter((l) => l.startsWith('kafka_network_requestmetrics_totaltimems_bucket{') && l.includes('request="Produce"') && l.includes('version="9"')).map((l) => Number(l.split(' ')[1]));
    assert.ok(buckets.length > 2 && buckets.every((v, i) => i === 0 || v >= buckets[i - 1]!), 'cumulative buckets');
    assert.equal(buckets.at(-1), 2);
    assert.equal(sample(s, 'kafka_network_requestmetrics_totaltimems_count', { request: 'Produce', version: '9' }), 2);

    // A consumer waiting at the log end for new records sits in the fetch purgatory until they come.
    assert.equal(sample(s, 'kafka_server_delayedoperationpurgatory_purgatorysize', { delayedOperation: 'Fetch' }), 0);
    const longPoll = conn.send(ApiKey.Fetch, 12, {
      replicaId: -1, maxWaitMs: 30_000, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 't', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 2n, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
      forgottenTopicsData: [], rackId: '',
    });
    await until(20_000, 'the long poll in the fetch purgatory', async () => (sample(await scrape(), 'kafka_server_delayedoperationpurgatory_purgatorysize', { delayedOperation: 'Fetch' }) === 1 ? true : undefined));
    const writer = await client.leaderFor('t', 0);
    assert.equal((await writer.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 10_000, topicData: [{ name: 't', partitionData: [{ index: 0, records: batch(['c']) }] }] })).responses[0].partitionResponses[0].errorCode, ErrorCode.NONE);
    const polled = await within(20_000, 'the long poll answered', longPoll);
    assert.ok(polled.responses[0].partitions[0].records.length > 0, 'the waiting fetch got the new record');
    // Every await so far may have been answered without the event loop waiting for I/O (Node 24
    // often is that quick): a pause gives the idle-time counter below something to count.
    await sleep(50);
    s = await scrape();
    assert.equal(sample(s, 'kafka_server_delayedoperationpurgatory_purgatorysize', { delayedOperation: 'Fetch' }), 0);
    assert.equal(sample(s, 'kafka_server_delayedoperationpurgatory_purgatorysize', { delayedOperation: 'Produce' }), 0);

    // The metadata log fsyncs before it acknowledges: flush times are counted from the start.
    const flushes = sample(s, 'kafka_log_logflushstats_logflushrateandtimems_count')!;
    assert.ok(flushes > 0, 'flushes counted');
    assert.equal(sample(s, 'kafka_log_logflushstats_logflushrateandtimems_bucket', { le: '+Inf' }), flushes);
    assert.ok(sample(s, 'kafka_log_logflushstats_logflushrateandtimems_sum')! > 0);

    // Node's own: heap, RSS, GC, open fds, event-loop delay and utilization.
    for (const name of ['nodejs_heap_size_used_bytes', 'process_resident_memory_bytes', 'process_open_fds', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_eventloop_active_seconds_total', 'nodejs_eventloop_idle_seconds_total']) {
      assert.ok(sample(s, name)! > 0, name);
    }
    assert.match(s, /^# TYPE nodejs_gc_duration_seconds histogram$/m);

    // The metadata log as this node applies it.
    assert.equal(sample(s, 'kafka_server_raft_metrics_high_watermark'), sample(s, 'kafka_server_raft_metrics_log_end_offset'));
    assert.equal(sample(s, 'kafka_server_broker_metadata_metrics_lag'), 0);

    // OpenMetrics when asked (what Prometheus sends), the Prometheus text otherwise.
    const om = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { accept: 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1' } });
    assert.equal(om.headers.get('content-type'), 'application/openmetrics-text; version=1.0.0; charset=utf-8');
    const omText = await om.text();
    assert.ok(omText.endsWith('\n# EOF\n'));
    assert.ok(!omText.includes('\n\n'), 'no blank lines');
    assert.match(omText, /^# TYPE kafka_network_requestmetrics_requests counter$/m);
    assert.equal(sample(omText, 'kafka_network_requestmetrics_requests_total', { request: 'Produce', version: '9' }), 3);
    assert.match((await fetch(`http://127.0.0.1:${port}/metrics`)).headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);

    if (!hasKcat) { test.skip('kcat is not installed: the consumer-group part is not checked'); return; }
    // A kcat consumer group reads the three records and leaves: one completed rebalance, the group Empty.
    const consumed = await runProcess('kcat', ['-b', bootstrap, '-G', 'g1', '-c', '3', '-f', '%s\\n', '-X', 'auto.offset.reset=earliest', 't'], null, 60_000);
    assert.equal(consumed.code, 0, consumed.stderr);
    assert.deepEqual(consumed.stdout.trim().split('\n'), ['a', 'b', 'c']);
    s = await until(20_000, 'the group empty', async () => {
      const x = await scrape();
      return sample(x, 'kafka_coordinator_group_groupmetadatamanager_numgroups', { protocol: 'classic', state: 'Empty' }) === 1 ? x : undefined;
    });
    assert.equal(sample(s, 'kafka_coordinator_group_groupmetadatamanager_numgroups', { protocol: 'classic', state: 'Stable' }), 0);
    assert.equal(sample(s, 'kafka_server_group_coordinator_metrics_group_rebalance_total', { protocol: 'classic' }), 1);
    assert.equal(sample(s, 'kafka_server_group_coordinator_metrics_group_rebalance_total', { protocol: 'consumer' }), 0);
  } finally {
    client.close();
    await server.close();
  }
});

test('a fresh node has the broker-wide series at 0 before any client request: bytes and messages in, bytes out, and requests and errors of every API and version it serves', { timeout: 60_000 }, async () => {
  const server = await startServer({
    listeners: ['PLAINTEXT://127.0.0.1:0'],
    config: parseBrokerConfig({ 'node.id': '1', listeners: 'PLAINTEXT://127.0.0.1:0', 'http.listener': '127.0.0.1:0' }),
  });
  const port = server.http!.port;
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
  try {
    const fresh = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    // Kafka's BrokerTopicMetrics without a topic tag: the broker's totals.
    for (const name of ['bytesin_total', 'messagesin_total', 'bytesout_total']) {
      assert.equal(sample(fresh, `kafka_server_brokertopicmetrics_${name}`), 0, name);
    }
    // Every API and version ApiVersions advertises (asked after the scrape, which it would count).
    const conn = await client.any();
    const advertised = (await conn.send(ApiKey.ApiVersions, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' })).apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[];
    assert.ok(advertised.length > 40, `${advertised.length} APIs advertised`);
    for (const a of advertised) {
      const request = apiInfo(a.apiKey)!.name;
      for (let version = a.minVersion; version <= a.maxVersion; version++) {
        assert.equal(sample(fresh, 'kafka_network_requestmetrics_requests_total', { request, version: String(version) }), 0, `${request} v${version}`);
      }
      assert.equal(sample(fresh, 'kafka_network_requestmetrics_errors_total', { request, error: 'NONE' }), 0, `${request} NONE`);
      assert.equal(sample(fresh, 'kafka_network_requestmetrics_errors_total', { request, error: 'UNKNOWN_SERVER_ERROR' }), 0, `${request} UNKNOWN_SERVER_ERROR`);
    }

    // The totals are the sums over topics.
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 't', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, ErrorCode.NONE);
    await client.topic('t');
    const leader = await client.leaderFor('t', 0);
    const r = await leader.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 10_000, topicData: [{ name: 't', partitionData: [{ index: 0, records: batch(['a', 'b']) }, { index: 1, records: batch(['c']) }] }] });
    assert.deepEqual(r.responses[0].partitionResponses.map((p: { errorCode: number }) => p.errorCode), [ErrorCode.NONE, ErrorCode.NONE]);
    const s = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.equal(sample(s, 'kafka_server_brokertopicmetrics_messagesin_total'), 3);
    assert.equal(sample(s, 'kafka_server_brokertopicmetrics_messagesin_total', { topic: 't' }), 3);
    assert.equal(sample(s, 'kafka_server_brokertopicmetrics_bytesin_total'), sample(s, 'kafka_server_brokertopicmetrics_bytesin_total', { topic: 't' }));
    assert.equal(sample(s, 'kafka_network_requestmetrics_requests_total', { request: 'Produce', version: '9' }), 1);
    assert.equal(sample(s, 'kafka_network_requestmetrics_requests_total', { request: 'Produce', version: '3' }), 0);
    assert.equal(sample(s, 'kafka_network_requestmetrics_errors_total', { request: 'Produce', error: 'NONE' }), 2);
  } finally {
    client.close();
    await server.close();
  }
});

test('OpenMetrics: a counter family is named without _total, untyped is unknown, # EOF ends it; asked for by the Accept header', () => {
  const text = '# HELP a_total As.\n# TYPE a_total counter\na_total{x="1"} 3\n\n# HELP b B.\n# TYPE b gauge\nb 1\n\n# HELP c C.\n# TYPE c untyped\nc 2\n';
  assert.equal(toOpenMetrics(text), '# HELP a As.\n# TYPE a counter\na_total{x="1"} 3\n# HELP b B.\n# TYPE b gauge\nb 1\n# HELP c C.\n# TYPE c unknown\nc 2\n# EOF\n');
  assert.equal(wantsOpenMetrics('application/openmetrics-text;version=1.0.0,text/plain;q=0.5'), true);
  assert.equal(wantsOpenMetrics('text/plain;version=0.0.4'), false);
  assert.equal(wantsOpenMetrics('application/openmetrics-text;q=0'), false);
  assert.equal(wantsOpenMetrics(undefined), false);
});
