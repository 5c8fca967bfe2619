// `logline doctor`'s remote copy lag item (tiered storage). A broker whose S3 backend points at a
// loopback port nobody listens on cannot copy anything: the rolled segments of a tiered topic pile
// up (RemoteCopyLagSegments), local retention keeps them all (it deletes only copied segments), and
// doctor warns naming the topic although the lag no longer grows. The threshold rule alone: more
// than 2 uncopied segments per partition warns, summed over the nodes leading a topic's partitions.
// (The growing rule is tested in doctor.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClusterClient, listOffsets } from '../../src/client/index.js';
import { startServer } from '../../src/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { freePort } from '../../src/util/index.js';
import { checkRemoteCopyLag, type Observed, type Thresholds } from '../../src/cli/doctor.js';
import type { NodeView } from '../../src/http/index.js';
import { runProcess, tempDataDir, until } from '../broker/process-helpers.js';

const MiB = 1024 * 1024;

interface Check { status: 'PASS' | 'WARN' | 'FAIL'; check: string; detail: string }

test('doctor warns about a tiered topic whose segments cannot be copied (S3 store absent), and local retention keeps them', { timeout: 120_000 }, async () => {
  const deadPort = await freePort(); // nothing listens there: every copy fails and is retried
  const node = await startServer({
    listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(),
    config: parseBrokerConfig({
      'node.id': '1', 'http.listener': '127.0.0.1:0', 'remote.log.storage.system.enable': 'true',
      'remote.log.storage.manager.class.name': 'io.aiven.kafka.tieredstorage.RemoteStorageManager',
      'rsm.config.storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage',
      'rsm.config.storage.s3.bucket.name': 'absent', 'rsm.config.storage.s3.endpoint.url': `http://127.0.0.1:${deadPort}`,
      'rsm.config.storage.s3.path.style.access.enabled': 'true',
      // Static credentials: the SDK's default chain would look beyond loopback for them.
      'rsm.config.storage.aws.access.key.id': 'LOGLINETESTKEY', 'rsm.config.storage.aws.secret.access.key': 'logline-test-secret',
      'remote.log.manager.task.interval.ms': '200', 'log.retention.check.interval.ms': '200', 'rlmm.config.remote.log.metadata.topic.num.partitions': '1',
    }),
  });
  const bootstrap = `127.0.0.1:${node.listeners[0]!.port}`;
  const http = `127.0.0.1:${node.http!.port}`;
  const client = new ClusterClient({ bootstrap });
  try {
    const configs = [['remote.storage.enable', 'true'], ['segment.bytes', String(MiB)], ['local.retention.bytes', String(MiB)]].map(([name, value]) => ({ name, value }));
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'stuck', numPartitions: 1, replicationFactor: 1, assignments: [], configs }], timeoutMs: 10_000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0, created.topics[0].errorMessage);
    await client.topic('stuck');
    const conn = await client.leaderFor('stuck', 0);
    // Five batches of ~1 MB, one per 1 MiB segment: four rolled segments to copy.
    for (let b = 0; b < 5; b++) {
      const records = Array.from({ length: 1000 }, (_, i) => ({ key: null, value: Buffer.from(String(b * 1000 + i).padEnd(1000, '.')), timestamp: Date.now() }));
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: 'stuck', partitionData: [{ index: 0, records: buildRecordBatchSync({ records }) }] }] });
      assert.equal(r.responses[0].partitionResponses[0].errorCode, 0);
    }
    await until(30_000, 'the leader reporting four uncopied segments', async () => {
      const view = await (await fetch(`http://${http}/v1/node`)).json() as NodeView;
      return view.remoteCopyLag.find((x) => x.topic === 'stuck')?.segments === 4 ? true : undefined;
    }, 200);

    const r = await runProcess(process.execPath, ['bin/logline.js', 'doctor', '-b', bootstrap, '--http', http, '--json', '--lag-interval-ms', '1000'], null, 60_000);
    assert.ok(r.stdout.startsWith('{'), `doctor printed JSON: ${r.stdout}${r.stderr}`);
    const check = (JSON.parse(r.stdout) as { checks: Check[] }).checks.find((c) => c.check === 'tiered storage copy lag');
    assert.equal(check?.status, 'WARN', JSON.stringify(check));
    assert.match(check!.detail, /more than 2 uncopied segments per partition in 1 topic: stuck \(4 segments over 1 partition\)/);
    // Nothing was deleted locally before it was copied: the local log still starts at 0.
    assert.equal([...(await listOffsets(client, [{ topic: 'stuck', partition: 0 }], -4n)).values()][0], 0n);
  } finally {
    client.close();
    await node.close();
  }
});

const node = (nodeId: number, lag: { topic: string; segments: number }[]) => ({
  address: `127.0.0.1:${nodeId}`,
  view: { nodeId, roles: ['broker'], produceRequests: [], remoteCopyLag: lag.map((l) => ({ ...l, bytes: l.segments * MiB })), tiered: null } satisfies NodeView,
});

function observed(nodes: ReturnType<typeof node>[]): Observed {
  return {
    topics: [{ name: 't', partitions: [0, 1].map((partition) => ({ partition })) }] as unknown as Observed['topics'],
    liveBrokers: [1, 2], registered: new Error('unused'), topicConfigs: new Map(), brokerConfigs: new Map(), quorum: new Error('unused'), logDirs: [],
    nodes, nodesLater: nodes, lag: { intervalMs: 1000, groups: [], errors: [] },
  };
}

test('remote copy lag threshold: more than 2 uncopied segments per partition warns, summed over the leaders; --remote-copy-lag-segments moves it', () => {
  const t: Thresholds = { diskWarnPct: 80, diskFailPct: 90, quorumFetchTimeoutMs: 5000 };
  // Topic t has 2 partitions, led by nodes 1 and 2: 4 segments in all is within 2 per partition.
  assert.equal(checkRemoteCopyLag(observed([node(1, [{ topic: 't', segments: 2 }]), node(2, [{ topic: 't', segments: 2 }])]), t).status, 'PASS');
  const high = checkRemoteCopyLag(observed([node(1, [{ topic: 't', segments: 3 }]), node(2, [{ topic: 't', segments: 2 }])]), t);
  assert.equal(high.status, 'WARN');
  assert.match(high.detail, /more than 2 uncopied segments per partition in 1 topic: t \(5 segments over 2 partitions\)/);
  assert.equal(checkRemoteCopyLag(observed([node(1, [{ topic: 't', segments: 3 }]), node(2, [{ topic: 't', segments: 2 }])]), { ...t, remoteCopyLagSegmentsPerPartition: 3 }).status, 'PASS');
});
