// What a user sees of a tiered topic (remote.storage.enable, local directory backend) through the
// admin API and the web console: four 1000-record batches of ~1 KB values in 1 MiB segments, so
// segments 0-999, 1000-1999 and 2000-2999 roll and are copied, local.retention.bytes (1 MiB) keeps
// the last rolled one and the active one on disk, and the partition shows remote log start 0, highest
// copied 2999, local log start 2000 and a remote size equal to what /metrics reports. The browser part
// runs when /usr/bin/chromium exists (and must under CI=true).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterClient, listOffsets } from '../../src/client/index.js';
import { startServer } from '../../src/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import type { NodeView, TopicRow } from '../../src/http/index.js';
import { tempDataDir, until } from '../broker/process-helpers.js';
import { browserWanted, withConsolePage } from './browser.js';

const MiB = 1024 * 1024;

test('a tiered topic in the admin API and the console: local and remote log start, highest copied offset, local and remote size', { timeout: 120_000 }, async () => {
  const remoteDir = mkdtempSync(join(tmpdir(), 'logline-tier-'));
  const node = await startServer({
    listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(),
    config: parseBrokerConfig({
      'node.id': '1', 'http.listener': '127.0.0.1:0', 'remote.log.storage.system.enable': 'true',
      'remote.log.storage.manager.class.name': 'org.apache.kafka.server.log.remote.storage.LocalTieredStorage', 'rsm.config.dir': remoteDir,
      'remote.log.manager.task.interval.ms': '200', 'log.retention.check.interval.ms': '200', 'rlmm.config.remote.log.metadata.topic.num.partitions': '1',
    }),
  });
  const http = `http://127.0.0.1:${node.http!.port}`;
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${node.listeners[0]!.port}` });
  const get = async <T>(path: string): Promise<T> => {
    const r = await fetch(`${http}${path}`);
    assert.equal(r.status, 200, `GET ${path}`);
    return await r.json() as T;
  };
  try {
    const configs = [['remote.storage.enable', 'true'], ['segment.bytes', String(MiB)], ['local.retention.bytes', String(MiB)]].map(([name, value]) => ({ name, value }));
    const created = await client.admin(ApiKey.CreateTopics, {
      topics: [{ name: 'events', numPartitions: 1, replicationFactor: 1, assignments: [], configs }, { name: 'plain', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 10_000, validateOnly: false,
    }, 7);
    for (const t of created.topics) assert.equal(t.errorCode, 0, t.errorMessage);
    await client.topic('events');
    const conn = await client.leaderFor('events', 0);
    for (let b = 0; b < 4; b++) {
      const records = Array.from({ length: 1000 }, (_, i) => ({ key: null, value: Buffer.from(`record-${String(b * 1000 + i).padStart(4, '0')}`.padEnd(1000, '.')), timestamp: Date.now() }));
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: 'events', partitionData: [{ index: 0, records: buildRecordBatchSync({ records }) }] }] });
      assert.equal(r.responses[0].partitionResponses[0].errorCode, 0);
    }

    // Copied, then deleted locally down to local.retention.bytes.
    const row = await until(60_000, 'segments 0-2999 copied and 0-1999 deleted locally', async () => {
      const t = await get<TopicRow>('/v1/topics/events');
      const p = t.partitions[0]!;
      return p.tiered?.localLogStartOffset === 2000 && p.tiered.highestOffsetInRemoteStorage === 2999 && p.sizeBytes !== null ? p : undefined;
    }, 200);
    assert.equal(row.logStartOffset, 0, 'the log starts at 0, in the tier');
    assert.equal(row.tiered!.remoteLogStartOffset, 0);
    assert.equal(row.logEndOffset, 4000);
    // Three segments of ~1 MB remote; two on local disk (the last copied one and the active one).
    assert.ok(row.tiered!.remoteSizeBytes > 3_000_000 && row.tiered!.remoteSizeBytes < 3 * MiB, `remote size ${row.tiered!.remoteSizeBytes}`);
    assert.ok(row.sizeBytes! > 2_000_000 && row.sizeBytes! < 2 * MiB + 1, `local size ${row.sizeBytes}`);
    // What a Kafka client sees agrees: EARLIEST_LOCAL and LATEST_TIERED.
    const ref = [{ topic: 'events', partition: 0 }];
    assert.equal([...(await listOffsets(client, ref, -4n)).values()][0], 2000n);
    assert.equal([...(await listOffsets(client, ref, -5n)).values()][0], 2999n);
    // /metrics' RemoteLogSizeBytes is the same figure.
    const metrics = await (await fetch(`${http}/metrics`)).text();
    assert.match(metrics, new RegExp(`^kafka_server_brokertopicmetrics_remotelogsizebytes\\{topic="events"\\} ${row.tiered!.remoteSizeBytes}$`, 'm'));
    // A topic without tiering has no tiered part.
    assert.equal((await get<TopicRow>('/v1/topics/plain')).partitions[0]!.tiered, null);

    // /v1/node: no copy lag once copied, the remote size, the read caches within their bounds.
    const nodeView = await get<NodeView>('/v1/node');
    assert.deepEqual(nodeView.tiered!.topics.find((x) => x.topic === 'events'), { topic: 'events', remoteLogSizeBytes: row.tiered!.remoteSizeBytes });
    assert.deepEqual(nodeView.remoteCopyLag.find((x) => x.topic === 'events'), { topic: 'events', bytes: 0, segments: 0 });
    assert.ok(nodeView.tiered!.chunkCache !== null && nodeView.tiered!.chunkCache.bytes <= nodeView.tiered!.chunkCache.bytesMax);

    if (browserWanted) {
      await withConsolePage(async (page, errors) => {
        await page.goto(`${http}/#/topics/events`);
        const tr = page.locator('tr[data-tiered-partition="0"]');
        await tr.waitFor();
        const cells = await tr.locator('td').allInnerTexts();
        assert.deepEqual(cells.slice(0, 4), ['0', '0', '2,999', '2,000'], 'partition, remote log start, highest copied, local log start');
        assert.match(cells[4]!, /^2\.\d MiB$/, 'remote size');
        assert.match(cells[5]!, /^1\.\d MiB$/, 'local size');
        await page.goto(`${http}/#/topics/plain`);
        await page.locator('tr[data-partition="0"]').waitFor();
        assert.equal(await page.locator('tr[data-tiered-partition]').count(), 0, 'no tiered table for a topic without tiering');
        assert.deepEqual(errors, []);
      });
    }
  } finally {
    client.close();
    await node.close();
    rmSync(remoteDir, { recursive: true, force: true });
  }
});
