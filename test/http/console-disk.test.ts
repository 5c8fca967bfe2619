// The web console's disk banner in a real browser (playwright-core driving Debian's chromium): a
// node on the in-memory file system (its capacity is the volume) filled below
// log.dir.min.free.bytes shows a red "Disk full" banner above every page; with the floor lowered
// (dynamically) under what is left, the banner turns into the "Disk low" warning; /metrics agrees.
// Without /usr/bin/chromium the test is skipped locally and fails under CI=true (.ci/run installs it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { startServer } from '../../src/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { MemoryFileSystem } from '../../src/storage/index.js';
import { until } from '../broker/process-helpers.js';
import { browserSkip as skip, openConsoleBrowser, type ConsoleBrowser } from './browser.js';

const ARTIFACTS = 'test-artifacts/console';
const MiB = 1 << 20;

test('web console: a banner above every page while the node\'s log directory is below its floor, a warning once it is only low', { skip, timeout: 90_000 }, async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const fs = new MemoryFileSystem();
  fs.capacityBytes = 48 * MiB;
  const node = await startServer({
    fs, dataDir: '/logline', listeners: ['PLAINTEXT://127.0.0.1:0'],
    config: parseBrokerConfig({ 'node.id': '1', listeners: 'PLAINTEXT://127.0.0.1:0', 'http.listener': '127.0.0.1:0', 'log.dir.min.free.bytes': String(16 * MiB), 'log.dir.free.bytes.alert.threshold': String(40 * MiB) }),
  });
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${node.listeners[0]!.port}` });
  const http = `http://127.0.0.1:${node.http!.port}`;
  let browser: ConsoleBrowser | null = null;
  try {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'fill', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    const conn = await client.leaderFor('fill', 0);
    let code = ErrorCode.NONE;
    for (let i = 0; i < 200 && code === ErrorCode.NONE; i++) {
      const records = buildRecordBatchSync({ records: Array.from({ length: 16 }, () => ({ key: null, value: Buffer.alloc(16 * 1024, 1), timestamp: Date.now() })) });
      const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: 'fill', partitionData: [{ index: 0, records }] }] });
      code = r.responses[0].partitionResponses[0].errorCode;
    }
    assert.equal(code, ErrorCode.NOT_ENOUGH_REPLICAS);

    browser = await openConsoleBrowser({ width: 1280, height: 800 });
    const { page, pageErrors } = browser;
    await page.goto(`${http}/`);
    const full = page.locator('#banner [data-disk="bad"]');
    await full.waitFor({ timeout: 20_000 });
    assert.match(await full.innerText(), /^Disk full: \/logline has ([\d.]+ MiB|[\d,]+ bytes) usable of 48\.0 MiB, below log\.dir\.min\.free\.bytes \(16\.0 MiB\)\. Produce to its partitions is refused/);
    await page.screenshot({ path: `${ARTIFACTS}/disk-full.png`, fullPage: true });
    // Above every view, not only the overview.
    await page.click('nav a[data-nav="topics"]');
    await page.locator('tr[data-topic="fill"]').waitFor();
    assert.equal(await full.isVisible(), true);
    assert.match(await (await fetch(`${http}/metrics`)).text(), /kafka_log_logmanager_logdirectoryfreespacealert\{logDirectory="\/logline"\} 2/);

    // The floor lowered under what is left (cluster default, dynamic): low, not full.
    const altered = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 4, resourceName: '', configs: [{ name: 'log.dir.min.free.bytes', configOperation: 0, value: String(MiB) }] }], validateOnly: false }, 1);
    assert.equal(altered.responses[0].errorCode, 0);
    const low = page.locator('#banner [data-disk="warn"]');
    await low.waitFor({ timeout: 30_000 });
    assert.match(await low.innerText(), /^Disk low: \/logline has .* below log\.dir\.free\.bytes\.alert\.threshold \(40\.0 MiB\); produce will be refused below 1\.0 MiB\.$/);
    assert.equal(await full.count(), 0);
    await until(10_000, 'metrics say low', async () => (/logdirectoryfreespacealert\{logDirectory="\/logline"\} 1/.test(await (await fetch(`${http}/metrics`)).text()) ? true : undefined), 200);
    assert.deepEqual(pageErrors, []);
  } finally {
    await browser?.close();
    client.close();
    await node.close();
  }
});
