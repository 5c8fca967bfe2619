// What a user sees of a share group (KIP-932) through the admin API and the web console's group
// pages: listed with the consumer groups as type share, and on its page the members with their
// assignments and, per share-partition, the start offset, the records in flight and acquired, and
// the lag. One share consumer holds the six records of `orders` (five on partition 0, one on 1)
// and accepts the first two. The browser part runs when /usr/bin/chromium exists (and must under CI=true).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiKey } from '../../src/protocol/index.js';
import { ACCEPT, ShareConsumer, type ShareRecord } from '../../src/cli/share-consumer.js';
import type { ShareGroupLag } from '../../src/http/group-lag.js';
import { startConsoleFixture, until } from './console-fixture.js';
import { browserWanted, withConsolePage } from './browser.js';

test('a share group in the admin API and the console: members, assignments, start offsets, in-flight and acquired records, lag', { timeout: 120_000 }, async () => {
  const f = await startConsoleFixture();
  const consumer = new ShareConsumer(f.client, 'workers', ['orders']);
  const get = async <T>(path: string): Promise<T> => {
    const r = await fetch(`${f.http}${path}`);
    assert.equal(r.status, 200, `GET ${path}`);
    return await r.json() as T;
  };
  try {
    const a = await f.client.any();
    const r = await a.send(ApiKey.IncrementalAlterConfigs, 1, { resources: [{ resourceType: 32, resourceName: 'workers', configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }], validateOnly: false });
    assert.equal(r.responses[0].errorCode, 0);
    await consumer.subscribe();
    const held: ShareRecord[] = [];
    await until(30_000, 'the six records of orders acquired', async () => {
      held.push(...await consumer.poll(500));
      return held.length >= 6 ? true : undefined;
    }, 0);
    for (const rec of held.filter((x) => x.partition === 0 && x.offset < 2)) assert.equal(await consumer.acknowledgeNow(rec, ACCEPT), 0);

    const { groups } = await get<{ groups: { groupId: string; type: string; members: number; totalLag: number | null }[] }>('/v1/groups');
    assert.deepEqual(groups.find((g) => g.groupId === 'workers'), { groupId: 'workers', state: 'Stable', type: 'share', protocolType: 'share', members: 1, totalLag: 4, coordinator: 1 });
    assert.equal(groups.find((g) => g.groupId === 'billing')?.type, 'classic', 'consumer groups are listed as before');
    const g = await get<ShareGroupLag>('/v1/groups/workers');
    assert.equal(g.type, 'share');
    assert.deepEqual(g.members.map((m) => m.assignment.map((x) => `${x.topic}-${x.partition}`).sort()), [['orders-0', 'orders-1', 'orders-2']]);
    assert.deepEqual(g.partitions.map((p) => ({ partition: p.partition, startOffset: p.startOffset, logEndOffset: p.logEndOffset, inFlight: p.inFlight, acquired: p.acquired, lag: p.lag })), [
      { partition: 0, startOffset: 2, logEndOffset: 5, inFlight: 3, acquired: 3, lag: 3 },
      { partition: 1, startOffset: 0, logEndOffset: 1, inFlight: 1, acquired: 1, lag: 1 },
      { partition: 2, startOffset: 0, logEndOffset: 0, inFlight: 0, acquired: 0, lag: 0 },
    ]);
    assert.equal(g.totalLag, 4);

    if (browserWanted) {
      await withConsolePage(async (page, errors) => {
        await page.goto(`${f.http}/#/groups`);
        const row = page.locator('tr[data-group="workers"]');
        await row.waitFor();
        assert.deepEqual((await row.locator('td').allInnerTexts()).slice(1, 5), ['Stable', 'share', '1', '4']);
        await page.goto(`${f.http}/#/groups/workers?poll=60000`);
        const p0 = page.locator('tr[data-lag-partition="orders-0"]');
        await p0.waitFor();
        // Topic, partition, start offset, log end offset, in flight, acquired, lag, members.
        assert.deepEqual(await p0.locator('td').allInnerTexts(), ['orders', '0', '2', '5', '3', '3', '3', 'logline-cli']);
        assert.match(await page.locator('body').innerText(), new RegExp(consumer.memberId), 'the member is listed');
        assert.deepEqual(errors, []);
      });
    }
  } finally {
    await consumer.close().catch(() => undefined);
    await f.close();
  }
});
