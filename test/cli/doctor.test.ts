// `logline doctor` against an in-process 3-node cluster, as an operator runs it. A cluster with
// deliberate problems (an RF 1 topic with unclean election on, the default min.insync.replicas 1, a
// topic whose ISR falls below its minimum, a killed broker, a kcat producer with acks=1, a group
// falling behind while records arrive) gets the FAIL and WARN lines those problems call for and exit
// code 1; a cluster set up by the checklist (RF 3, min.insync.replicas 2, idempotent acks=all
// producers, a group that has read everything) passes every item with exit code 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startCluster, type ClusterHandle } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { describeQuorum } from '../../src/cli/cluster.js';
import { checkDisks, checkMinInsyncReplicas, checkQuorum, checkRemoteCopyLag, checkReplicationFactor, judge, type Observed, type Thresholds } from '../../src/cli/doctor.js';
import { runProcess, until, within } from '../broker/process-helpers.js';
import { commit } from '../http/console-fixture.js';

const BIN = 'bin/logline.js';
const hasKcat = spawnSync('kcat', ['-V']).status === 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Kafka's broker.session.timeout.ms (9 s), heartbeats every 500 ms. The three nodes share the test's
// process, so a shorter session lets a loaded machine fence a live broker too (seen with 2 s and
// again with 4 s under a load average of ~16: a live replica of `orders` out, the ISR down to one).
const FAST_FENCING = { 'broker.session.timeout.ms': '9000', 'broker.heartbeat.interval.ms': '500' };

interface Check { status: 'PASS' | 'WARN' | 'FAIL'; check: string; detail: string }

async function createTopic(client: ClusterClient, name: string, replicas: number[], configs: { name: string; value: string }[] = []): Promise<void> {
  const r = await client.admin(ApiKey.CreateTopics, {
    topics: [{ name, numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: replicas }], configs }], timeoutMs: 10_000, validateOnly: false,
  }, 7);
  assert.equal(r.topics[0].errorCode, 0, `create ${name}: ${r.topics[0].errorMessage}`);
  await client.topic(name);
}

async function produce(client: ClusterClient, topic: string, values: string[]): Promise<number> {
  const conn = await client.leaderFor(topic, 0);
  const records = buildRecordBatchSync({ records: values.map((v) => ({ key: null, value: Buffer.from(v) })) });
  const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
  return r.responses[0].partitionResponses[0].errorCode;
}

function kcatProduce(bootstrap: string, topic: string, settings: string[], lines: string) {
  return runProcess('kcat', ['-P', '-b', bootstrap, '-t', topic, '-p', '0', ...settings.flatMap((s) => ['-X', s])], lines);
}

async function doctor(cluster: ClusterHandle, bootstrap: string, ...args: string[]): Promise<{ code: number | null; checks: Map<string, Check>; stdout: string }> {
  const http = cluster.nodes.map((n) => `127.0.0.1:${n.httpPort}`).join(',');
  const r = await runProcess(process.execPath, [BIN, 'doctor', '-b', bootstrap, '--http', http, '--json', ...args], null, 120_000);
  assert.ok(r.stdout.startsWith('{'), `doctor printed JSON: ${r.stdout}${r.stderr}`);
  const out = JSON.parse(r.stdout) as { checks: Check[] };
  return { code: r.code, checks: new Map(out.checks.map((c) => [c.check, c])), stdout: r.stdout };
}

const summary = (checks: Map<string, Check>) => [...checks.values()].map((c) => `${c.status} ${c.check}: ${c.detail}`).join('\n');

test('a cluster with deliberate problems: RF 1, min ISR 1, unclean election, a killed broker, acks=1, growing lag → the expected FAIL/WARN lines and exit code 1', { skip: !hasKcat && 'kcat is not installed', timeout: 240_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: FAST_FENCING }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    await client.metadata(null);
    // The victim is not the active controller, so the quorum keeps its leader.
    const victim = cluster.nodes.find((n) => n.nodeId !== client.controllerId)!;
    const rest = cluster.nodes.filter((n) => n !== victim);
    await createTopic(client, 'solo', [victim.nodeId], [{ name: 'unclean.leader.election.enable', value: 'true' }]);
    await createTopic(client, 'strict', [rest[0]!.nodeId, rest[1]!.nodeId, victim.nodeId], [{ name: 'min.insync.replicas', value: '3' }]);
    await createTopic(client, 'orders', [rest[0]!.nodeId, rest[1]!.nodeId, victim.nodeId], [{ name: 'min.insync.replicas', value: '2' }]);
    const live = `127.0.0.1:${rest[0]!.brokerPort}`;
    const acks1 = await kcatProduce(live, 'orders', ['acks=1'], 'a\nb\nc\n');
    assert.equal(acks1.code, 0, acks1.stderr);
    await commit(client, 'slow', 'orders', 0, 0n);
    // The leader of `orders` counted kcat's request, on /metrics as on /v1/node.
    const scrape = await (await fetch(`http://127.0.0.1:${rest[0]!.httpPort}/metrics`)).text();
    const acks1Count = /^logline_produce_requests_total\{acks="1",idempotent="false"\} (\d+)$/m.exec(scrape);
    assert.ok(acks1Count !== null && Number(acks1Count[1]) >= 1, 'acks=1 counted on the leader');

    await victim.kill();
    const survivor = new ClusterClient({ bootstrap: live });
    try {
      await until(30_000, 'solo offline', async () => ((await survivor.metadata(['solo']))[0]?.partitions[0]?.leader === -1 ? true : undefined));
      // DescribeQuorum shows the dead voter not fetching once doctor's default timeout has passed.
      await until(30_000, 'the dead voter stops fetching', async () => {
        const q = await describeQuorum(survivor);
        const v = q.voters.find((x) => x.id === victim.nodeId);
        return v && (v.lastFetchMsAgo === null || v.lastFetchMsAgo > 6000) ? true : undefined;
      });
      // Records keep arriving for `orders` while doctor samples the lag of `slow`, which reads nothing.
      // A retriable answer (a follower briefly out of the ISR on a loaded machine) is retried, as a
      // client would; anything else fails the test.
      const retriable: number[] = [ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, ErrorCode.REQUEST_TIMED_OUT, ErrorCode.NOT_LEADER_OR_FOLLOWER];
      let producing = true;
      let produced = 0;
      const producer = (async () => {
        while (producing) {
          const code = await produce(survivor, 'orders', ['x']);
          if (code === ErrorCode.NONE) produced++;
          else assert.ok(retriable.includes(code), `produce to orders: error ${code}`);
          await sleep(100);
        }
      })();
      // Any real volume is fuller than 0.1% and none fuller than 100%: the disk line must warn with real numbers.
      const r = await doctor(cluster, live, '--lag-interval-ms', '2000', '--disk-warn-pct', '0.1', '--disk-fail-pct', '100').finally(() => { producing = false; });
      await producer;
      assert.ok(produced > 0, 'records arrived for orders while doctor ran');
      const c = r.checks;
      const all = summary(c);
      assert.equal(r.code, 1, all);
      const status = (name: string) => c.get(name)?.status;
      assert.equal(status('replication factor'), 'FAIL', all);
      assert.match(c.get('replication factor')!.detail, /solo \(RF 1\)/);
      assert.equal(status('min.insync.replicas'), 'FAIL', all);
      // `orders` has 2; __consumer_offsets (RF 3) took the broker default 1; RF 1 `solo` is the RF line's finding.
      assert.match(c.get('min.insync.replicas')!.detail, /: __consumer_offsets \(1\); the broker default is 1/);
      assert.doesNotMatch(c.get('min.insync.replicas')!.detail, /solo/);
      assert.doesNotMatch(c.get('min.insync.replicas')!.detail, /orders/);
      assert.equal(status('unclean.leader.election.enable'), 'FAIL', all);
      assert.match(c.get('unclean.leader.election.enable')!.detail, /topic: solo$/);
      assert.equal(status('under-replicated partitions'), 'WARN', all);
      assert.match(c.get('under-replicated partitions')!.detail, /orders-0/);
      assert.match(c.get('under-replicated partitions')!.detail, /strict-0/);
      assert.equal(status('offline partitions'), 'FAIL', all);
      assert.match(c.get('offline partitions')!.detail, /1 partition .*: solo-0$/);
      assert.equal(status('under-min-ISR partitions'), 'FAIL', all);
      assert.match(c.get('under-min-ISR partitions')!.detail, /: strict-0$/);
      assert.equal(status('controller quorum'), 'WARN', all);
      assert.match(c.get('controller quorum')!.detail, new RegExp(`2 of 3 voters up.*not fetching .*: ${victim.nodeId}`));
      assert.equal(status('fenced brokers'), 'FAIL', all);
      assert.match(c.get('fenced brokers')!.detail, new RegExp(`1 of 3 registered brokers fenced .*: ${victim.nodeId}$`));
      assert.equal(status('consumer group lag'), 'WARN', all);
      assert.match(c.get('consumer group lag')!.detail, /in 1 group: slow \(\d+ → \d+\)/);
      assert.equal(status('disk usage'), 'WARN', all);
      for (const n of rest) assert.match(c.get('disk usage')!.detail, new RegExp(`broker ${n.nodeId} \\S+ \\d+(\\.\\d)?%`));
      assert.equal(status('producer acks and idempotence'), 'WARN', all);
      assert.match(c.get('producer acks and idempotence')!.detail, /\d+ with acks=1/);
      assert.match(c.get('producer acks and idempotence')!.detail, /acks=all without idempotence/, 'this test\'s own producer');

      // The table a user reads: one line per item, status first.
      const table = await runProcess(process.execPath, [BIN, 'doctor', '-b', live, '--http', `127.0.0.1:${rest[0]!.httpPort}`, '--lag-interval-ms', '0']);
      assert.equal(table.code, 1);
      assert.match(table.stdout, /^STATUS\s+CHECK\s+DETAIL/);
      assert.match(table.stdout, /\nFAIL\s+offline partitions\s+1 partition without a leader/);
      assert.match(table.stdout, /\d+ passed, \d+ warnings?, \d+ failed/);
    } finally {
      survivor.close();
    }
  } finally {
    client.close();
    await cluster.close();
  }
});

test('a cluster set up by the checklist: RF 3, min.insync.replicas 2, idempotent acks=all producers, a caught-up group → every item PASS and exit code 0', { skip: !hasKcat && 'kcat is not installed', timeout: 240_000 }, async () => {
  const cluster = await within(60_000, 'startCluster', startCluster({ nodes: 3, config: { ...FAST_FENCING, 'min.insync.replicas': '2' } }));
  const client = new ClusterClient({ bootstrap: cluster.bootstrap });
  try {
    await createTopic(client, 'orders', [1, 2, 3]);
    const idempotent = await kcatProduce(cluster.bootstrap, 'orders', ['acks=all', 'enable.idempotence=true'], 'a\nb\nc\n');
    assert.equal(idempotent.code, 0, idempotent.stderr);
    await commit(client, 'caught-up', 'orders', 0, 3n);
    await until(60_000, 'every ISR full', async () => {
      const topics = await client.metadata(null);
      return topics.length >= 2 && topics.every((t) => t.partitions.every((p) => p.leader >= 0 && p.isr.length === p.replicas.length)) ? true : undefined;
    });
    // The machine's own disk is not this cluster's doing: only a volume over 100% (none) would count.
    const r = await doctor(cluster, cluster.bootstrap, '--lag-interval-ms', '500', '--disk-warn-pct', '100', '--disk-fail-pct', '100');
    const all = summary(r.checks);
    assert.equal(r.checks.size, 12, all);
    for (const c of r.checks.values()) assert.equal(c.status, 'PASS', all);
    assert.equal(r.code, 0, all);
    assert.match(r.checks.get('producer acks and idempotence')!.detail, /all acks=all with idempotence/);
    assert.match(r.checks.get('consumer group lag')!.detail, /\(1 group\)/);
  } finally {
    client.close();
    await cluster.close();
  }
});

// The rules alone, on what `gather` would have observed (no cluster): the edges the cluster tests
// above do not reach.
const base = (over: Partial<Observed> = {}): Observed => ({
  topics: [{ name: 't', topicId: '', isInternal: false, errorCode: 0, partitions: [{ partition: 0, leader: 1, leaderEpoch: 0, replicas: [1, 2], isr: [1, 2], offlineReplicas: [], errorCode: 0 }] }],
  liveBrokers: [1, 2, 3],
  registered: new Error('no HTTP'),
  topicConfigs: new Map([['t', new Map<string, string | null>([['min.insync.replicas', '2'], ['unclean.leader.election.enable', 'false']])]]),
  brokerConfigs: new Map<string, string | null>([['min.insync.replicas', '2']]),
  quorum: { leaderId: 1, leaderEpoch: 4, highWatermark: '10', voters: [1, 2, 3].map((id) => ({ id, logEndOffset: '10', lag: '0', lastFetchMsAgo: 100, lastCaughtUpMsAgo: 100 })), observers: [] },
  logDirs: [], nodes: [], nodesLater: null, lag: null,
  ...over,
});
const THRESHOLDS: Thresholds = { diskWarnPct: 80, diskFailPct: 90, quorumFetchTimeoutMs: 5000 };

test('rules: RF 2 warns, min ISR equal to RF warns, a quorum without a majority fails, an offline log dir fails, a fuller volume warns then fails', () => {
  assert.equal(checkReplicationFactor(base()).status, 'WARN');
  assert.match(checkReplicationFactor(base()).detail, /t \(RF 2\)/);
  assert.equal(checkReplicationFactor(base({ liveBrokers: [1, 2] })).status, 'PASS', 'fewer than 3 brokers: not applicable');
  const minIsr = checkMinInsyncReplicas(base());
  assert.equal(minIsr.status, 'WARN');
  assert.match(minIsr.detail, /any one replica is down in 1 topic: t \(2 of RF 2\)/);
  const oneCopy = base({ topicConfigs: new Map([['t', new Map<string, string | null>([['min.insync.replicas', '1']])]]) });
  assert.equal(checkMinInsyncReplicas(oneCopy).status, 'FAIL', 'RF 2 with min ISR 1');
  const single = base({
    liveBrokers: [1], brokerConfigs: new Map<string, string | null>([['min.insync.replicas', '1']]),
    topics: [{ ...base().topics[0]!, partitions: [{ ...base().topics[0]!.partitions[0]!, replicas: [1], isr: [1] }] }],
    topicConfigs: new Map([['t', new Map<string, string | null>([['min.insync.replicas', '1']])]]),
  });
  assert.equal(checkMinInsyncReplicas(single).status, 'PASS', 'one broker, one copy: nothing to wait for');

  const voters = (ago: (number | null)[]) => ({ leaderId: 1, leaderEpoch: 4, highWatermark: '10', observers: [], voters: ago.map((a, i) => ({ id: i + 1, logEndOffset: '10', lag: '0', lastFetchMsAgo: a, lastCaughtUpMsAgo: a })) });
  assert.equal(checkQuorum(base(), THRESHOLDS).status, 'PASS');
  assert.equal(checkQuorum(base({ quorum: voters([0, 100, 9000]) }), THRESHOLDS).status, 'WARN');
  const lost = checkQuorum(base({ quorum: voters([0, null, 9000]) }), THRESHOLDS);
  assert.equal(lost.status, 'FAIL');
  assert.match(lost.detail, /1 of 3 voters up: below a majority \(2\); down: 2, 3/);

  const dir = (usedPct: number, errorCode = 0) => ({ path: '/d', errorCode, totalBytes: 1000n, usableBytes: BigInt(1000 - usedPct * 10) });
  assert.equal(checkDisks(base({ logDirs: [{ brokerId: 1, dirs: [dir(50)] }] }), THRESHOLDS).status, 'PASS');
  assert.equal(checkDisks(base({ logDirs: [{ brokerId: 1, dirs: [dir(85)] }] }), THRESHOLDS).status, 'WARN');
  assert.equal(checkDisks(base({ logDirs: [{ brokerId: 1, dirs: [dir(95)] }] }), THRESHOLDS).status, 'FAIL');
  assert.equal(checkDisks(base({ logDirs: [{ brokerId: 1, dirs: [dir(10, 56)] }] }), THRESHOLDS).status, 'FAIL', 'KAFKA_STORAGE_ERROR: offline');
  // Each broker's log.dir.min.free.bytes and alert threshold, whatever the percentages say.
  const floors = (usedPct: number) => base({ logDirs: [{ brokerId: 2, dirs: [dir(usedPct)], minFreeBytes: 300n, alertFreeBytes: 450n }] });
  assert.equal(checkDisks(floors(50), THRESHOLDS).status, 'PASS', '500 usable: above both');
  const low = checkDisks(floors(60), THRESHOLDS);
  assert.equal(low.status, 'WARN', '400 usable: under the alert threshold');
  assert.match(low.detail, /^broker 2 \/d has 400 bytes usable, below log\.dir\.free\.bytes\.alert\.threshold 450 bytes \(produce is refused below 300 bytes\)$/);
  const floor = checkDisks(floors(75), THRESHOLDS);
  assert.equal(floor.status, 'FAIL', '250 usable: under the floor');
  assert.match(floor.detail, /^broker 2 \/d has 250 bytes usable, below log\.dir\.min\.free\.bytes 300 bytes \(produce refused until space is freed\)$/);
  assert.equal(checkDisks(base({ logDirs: [{ brokerId: 2, dirs: [dir(75)], minFreeBytes: 0n, alertFreeBytes: 0n }] }), THRESHOLDS).status, 'PASS', 'a floor of 0 is none');

  const judged = judge(base({ registered: new Error('refused') }), THRESHOLDS);
  assert.equal(judged.find((c) => c.check === 'fenced brokers')?.status, 'WARN', 'unknown is not a pass');
  assert.equal(judged.find((c) => c.check === 'producer acks and idempotence')?.status, 'WARN');
});

test('rules: a tiered copy lag that grew between the two samples warns; a steady or no lag passes', () => {
  const node = (nodeId: number, remoteCopyLag: { topic: string; bytes: number; segments: number }[]) => ({ address: `127.0.0.1:${nodeId}`, view: { nodeId, roles: ['broker'], produceRequests: [], remoteCopyLag, tiered: null } });
  const lag = { intervalMs: 5000, groups: [], errors: [] };
  assert.match(checkRemoteCopyLag(base()).detail, /no HTTP API answered|no tiered topic/);
  assert.equal(checkRemoteCopyLag(base({ nodes: [node(1, [])], nodesLater: [node(1, [])], lag })).status, 'PASS');
  const grew = checkRemoteCopyLag(base({ nodes: [node(1, [{ topic: 't', bytes: 10, segments: 1 }])], nodesLater: [node(1, [{ topic: 't', bytes: 30, segments: 3 }])], lag }));
  assert.equal(grew.status, 'WARN');
  assert.match(grew.detail, /t on node 1 \(1 → 3 segments, 30 bytes\)/);
  assert.equal(checkRemoteCopyLag(base({ nodes: [node(1, [{ topic: 't', bytes: 30, segments: 3 }])], nodesLater: [node(1, [{ topic: 't', bytes: 20, segments: 2 }])], lag })).status, 'PASS', 'shrinking: copying keeps up');
  assert.equal(checkRemoteCopyLag(base({ nodes: [node(1, [{ topic: 't', bytes: 0, segments: 0 }])], nodesLater: [new Error('down')].map((view) => ({ address: 'x', view })), lag })).status, 'PASS', 'not answered the second time: nothing seen growing');
  assert.equal(checkRemoteCopyLag(base({ nodes: [node(1, [{ topic: 't', bytes: 9, segments: 2 }])] })).status, 'PASS', 'sampled once: a lag alone does not warn');
});
