// The console's schema registry pages against a node whose registry holds an evolving Avro subject
// (three versions, its own level), a Protobuf subject that references it by name, and a
// soft-deleted subject: /v1/schemas and /v1/schemas/:subject answer from the node's replayed
// `_schemas`, and in a real browser (playwright-core driving Debian's chromium) the subjects page
// lists them and a subject's page shows its versions and two of them side by side with the lines
// that changed marked. Screenshots go to test-artifacts/console/. Without /usr/bin/chromium the
// browser test is skipped locally and fails under CI=true (.ci/run installs it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { startServer, type ServerHandle } from '../../src/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = 'test-artifacts/console';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const present = existsSync(CHROMIUM);
const skip = !present && process.env.CI !== 'true' ? `${CHROMIUM} is missing (apt-get install chromium); .ci/run installs it` : false;

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
});
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
  const missing = await fetch(`${http}/v1/schemas/nope`);
  assert.equal(missing.status, 404);
  assert.equal(((await missing.json()) as any).errorCode, 40401);
});

test('web console: the subjects page, and a subject\'s versions side by side with their differences', { skip, timeout: 60_000 }, async () => {
  assert.ok(present, `${CHROMIUM} is required under CI=true (.ci/run installs chromium)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  const browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'logline-chromium-')), { executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1280, height: 900 } });
  const shot = (page: Page, name: string) => page.screenshot({ path: `${ARTIFACTS}/${name}.png`, fullPage: true });
  try {
    const page = browser.pages()[0] ?? await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));

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
    assert.deepEqual(pageErrors, []);
  } finally {
    await browser.close();
  }
});
