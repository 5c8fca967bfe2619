// The console's schema registry pages against a node whose registry holds an evolving Avro subject
// (three versions, its own level), a Protobuf subject that references it by name, and a
// soft-deleted subject: /v1/schemas and /v1/schemas/:subject answer from the node's replayed
// `_schemas`, and in a real browser (playwright-core driving Debian's chromium) the subjects page
// lists them and a subject's page shows its versions and two of them side by side with the lines
// that changed marked, and a topic's records framed by Confluent's serializers (magic byte, schema
// id) decoded with their schema in the message browser. Screenshots go to test-artifacts/console/. Without /usr/bin/chromium the
// browser test is skipped locally and fails under CI=true (.ci/run installs it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import avro from 'avsc';
import protobuf from 'protobufjs';
import { startServer, type ServerHandle } from '../../src/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { browserSkip as skip, withConsolePage } from './browser.js';

const ARTIFACTS = 'test-artifacts/console';

const V1 = { type: 'record', name: 'Order', namespace: 'shop', fields: [{ name: 'id', type: 'long' }, { name: 'item', type: 'string' }] };
const V2 = { ...V1, fields: [...V1.fields, { name: 'qty', type: 'int', default: 1 }] };
const V3 = { ...V1, fields: [V1.fields[0], { name: 'qty', type: 'int', default: 1 }, { name: 'note', type: ['null', 'string'], default: null }] };

let node: ServerHandle;
let http: string;

async function registry(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${node.schemaRegistryUrl}${path}`, { method, headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const json = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  return json;
}

before(async () => {
  node = await startServer({
    listeners: ['PLAINTEXT://127.0.0.1:0'],
    config: parseBrokerConfig({ 'node.id': '1', listeners: 'PLAINTEXT://127.0.0.1:0', 'http.listener': '127.0.0.1:0', 'schema.registry.listener': '127.0.0.1:0' }),
  });
  http = `http://127.0.0.1:${node.http!.port}`;
  await registry('POST', '/subjects/orders-value/versions', { schema: JSON.stringify(V1) });
  await registry('POST', '/subjects/orders-value/versions', { schema: JSON.stringify(V2) });
  // v3 drops `item` (not BACKWARD): the subject's own level lets it in.
  await registry('PUT', '/config/orders-value', { compatibility: 'NONE' });
  await registry('POST', '/subjects/orders-value/versions', { schema: JSON.stringify(V3) });
  await registry('POST', '/subjects/money/versions', { schemaType: 'PROTOBUF', schema: 'syntax = "proto3";\npackage shop;\n\nmessage Money {\n  int64 cents = 1;\n}\n' });
  await registry('POST', '/subjects/payments-value/versions', {
    schemaType: 'PROTOBUF', schema: 'syntax = "proto3";\npackage shop;\n\nimport "money.proto";\n\nmessage Payment {\n  shop.Money amount = 1;\n}\n',
    references: [{ name: 'money.proto', subject: 'money', version: 1 }],
  });
  await registry('POST', '/subjects/old-value/versions', { schema: '"string"' });
  await registry('DELETE', '/subjects/old-value');

  // Records as the serializers frame them: 0, the schema id (big-endian), the encoded data.
  const frame = (id: number, data: Uint8Array) => Buffer.concat([Buffer.from([0]), Buffer.from([id >>> 24, (id >>> 16) & 255, (id >>> 8) & 255, id & 255]), data]);
  await consoleApi('POST', '/v1/topics', { name: 'orders', partitions: 1 });
  const order = avro.Type.forSchema(V3 as avro.Schema);
  await produce('orders', frame(3, order.toBuffer({ id: 7, qty: 2, note: 'gift' })));
  await produce('orders', frame(99, Buffer.from('not ours')));
  await produce('orders', frame(3, Buffer.from([0xff, 0xff, 0xff])));
  const root = protobuf.parse('syntax = "proto3"; package shop; message Money { int64 cents = 1; } message Payment { Money amount = 1; }').root;
  const Payment = root.lookupType('shop.Payment');
  const paymentsId = (await registry('GET', '/subjects/payments-value/versions/1')).id as number;
  // Message indexes: one level, index 0 (Payment is the file's first message).
  await consoleApi('POST', '/v1/topics', { name: 'payments', partitions: 1 });
  await produce('payments', frame(paymentsId, Buffer.concat([Buffer.from([2, 0]), Buffer.from(Payment.encode(Payment.create({ amount: { cents: 1250 } })).finish())])));
});

async function consoleApi(method: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(`${http}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  assert.ok(res.ok, JSON.stringify(json));
  return json;
}
const produce = (topic: string, value: Buffer) => consoleApi('POST', `/v1/topics/${topic}/messages`, { partition: 0, value: value.toString('base64'), encoding: 'base64' });
after(async () => { await node?.close(); });

test('/v1/schemas and /v1/schemas/:subject: subjects with their latest version, levels and modes; a subject\'s versions', async () => {
  const list = await (await fetch(`${http}/v1/schemas`)).json() as any;
  assert.equal(list.compatibility, 'BACKWARD');
  assert.equal(list.mode, 'READWRITE');
  assert.deepEqual(list.subjects.map((s: any) => [s.subject, s.schemaType, s.latestVersion, s.versions, s.deleted, s.compatibility]), [
    ['money', 'PROTOBUF', 1, 1, false, null],
    ['old-value', 'AVRO', 1, 1, true, null],
    ['orders-value', 'AVRO', 3, 3, false, 'NONE'],
    ['payments-value', 'PROTOBUF', 1, 1, false, null],
  ]);
  const orders = await (await fetch(`${http}/v1/schemas/orders-value`)).json() as any;
  assert.equal(orders.compatibility, 'NONE');
  assert.equal(orders.compatibilitySource, 'subject');
  assert.equal(orders.modeSource, 'global');
  assert.deepEqual(orders.versions.map((v: any) => [v.version, v.id, JSON.parse(v.schema)]), [[1, 1, V1], [2, 2, V2], [3, 3, V3]]);
  const byId = await (await fetch(`${http}/v1/schemas/ids/1`)).json() as any;
  assert.deepEqual(byId.usages, [{ subject: 'orders-value', version: 1, deleted: false }]);
  assert.deepEqual(JSON.parse(byId.schema), V1);

  // The message browser's API: framed values decoded with their schema; an unknown id left as bytes; bytes that do not decode say why.
  const page = await (await fetch(`${http}/v1/topics/orders/messages?offset=0`)).json() as any;
  const byOffset = new Map(page.messages.map((m: any) => [m.offset, m]));
  assert.deepEqual((byOffset.get(0) as any).decodedValue, { schemaId: 3, schemaType: 'AVRO', value: { id: 7, qty: 2, note: 'gift' } });
  assert.equal((byOffset.get(1) as any).decodedValue, undefined);
  assert.equal((byOffset.get(2) as any).decodedValue.schemaId, 3);
  assert.match((byOffset.get(2) as any).decodedValue.error, /./);
  const payments = await (await fetch(`${http}/v1/topics/payments/messages`)).json() as any;
  assert.deepEqual(payments.messages[0].decodedValue.value, { amount: { cents: '1250' } });

  const missing = await fetch(`${http}/v1/schemas/nope`);
  assert.equal(missing.status, 404);
  assert.equal(((await missing.json()) as any).errorCode, 40401);
});

test('web console: the subjects page, and a subject\'s versions side by side with their differences', { skip, timeout: 60_000 }, async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const shot = (page: Page, name: string) => page.screenshot({ path: `${ARTIFACTS}/${name}.png`, fullPage: true });
  await withConsolePage(async (page, pageErrors) => {

    await page.goto(`${http}/`);
    await page.click('nav a[data-nav="schemas"]');
    await page.locator('tr[data-subject="orders-value"]').waitFor();
    assert.equal(await page.locator('[data-card="Subjects"] .value').innerText(), '3');
    assert.equal(await page.locator('[data-card="Compatibility"] .value').innerText(), 'BACKWARD');
    assert.match(await page.locator('tr[data-subject="orders-value"]').innerText(), /orders-value\s+AVRO\s+3\s+3\s+3\s+NONE\s+READWRITE \(global\)/);
    assert.match(await page.locator('tr[data-subject="old-value"]').innerText(), /soft-deleted/);
    assert.match(await page.locator('tr[data-subject="payments-value"]').innerText(), /PROTOBUF\s+1\s+\d+\s+1\s+BACKWARD \(global\)/);
    await shot(page, 'schemas');

    await page.click('tr[data-subject="orders-value"] a');
    await page.locator('table.diff').waitFor();
    assert.equal(await page.locator('[data-card="Compatibility"] .value').innerText(), 'NONE');
    assert.equal(await page.locator('tr[data-version]').count(), 3);
    // By default the newest version beside the one before it: v3 dropped `item` and added `note`.
    assert.equal(await page.locator('table.diff').getAttribute('data-diff'), '2-3');
    const removed = await page.locator('table.diff tr.diff-del td.left, table.diff tr.diff-change td.left').allInnerTexts();
    const added = await page.locator('table.diff tr.diff-add td.right, table.diff tr.diff-change td.right').allInnerTexts();
    assert.ok(removed.some((l) => l.includes('"item"')), `removed lines: ${removed.join(' | ')}`);
    assert.ok(added.some((l) => l.includes('"note"')), `added lines: ${added.join(' | ')}`);
    assert.ok(!removed.concat(added).some((l) => l.includes('"qty"')), 'qty is in both');
    await shot(page, 'schema-diff');

    await page.selectOption('select[data-pick="left"]', '1');
    await page.waitForFunction(() => document.querySelector('table.diff')?.getAttribute('data-diff') === '1-3');
    assert.ok((await page.locator('table.diff tr.diff-add td.right, table.diff tr.diff-change td.right').allInnerTexts()).some((l) => l.includes('"qty"')));

    // A Protobuf subject: its reference links to the subject it names.
    await page.goto(`${http}/#/schemas/payments-value`);
    await page.locator('tr[data-version="1"]').waitFor();
    assert.match(await page.locator('tr[data-version="1"]').innerText(), /money\.proto → money v1/);
    assert.match(await page.locator('table.diff').innerText(), /message Payment \{/);

    // The message browser: the framed value decoded, with its schema's id; the badge leads to that schema.
    await page.goto(`${http}/#/topics/orders/messages?mode=oldest`);
    await page.locator('#messages tr[data-offset="0"]').waitFor();
    const decoded = page.locator('#messages tr[data-offset="0"] td.value');
    assert.equal(await decoded.locator('[data-schema-id]').innerText(), 'schema 3 · AVRO');
    assert.deepEqual(JSON.parse(await decoded.locator('pre').innerText()), { id: 7, qty: 2, note: 'gift' });
    assert.match(await page.locator('#messages tr[data-offset="2"] td.value').innerText(), /schema 3 · AVRO\s+does not decode/);
    assert.match(await page.locator('#messages tr[data-offset="1"] td.value').innerText(), /not ours/, 'an id the registry does not know: the bytes');
    await shot(page, 'schema-messages');
    await decoded.locator('[data-schema-id]').click();
    await page.locator('tr[data-usage="orders-value-3"]').waitFor();
    assert.match(await page.locator('pre.schema').innerText(), /"name": "note"/);
    assert.deepEqual(pageErrors, []);
  }, { width: 1280, height: 900 });
});
