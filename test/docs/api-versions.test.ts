// docs/clients.md's "API versions" table is what ApiVersions advertises on a broker listener: the
// table between the api-versions markers must equal the one rendered from a running node's router.
// LOGLINE_WRITE_DOCS=1 rewrites the table instead of comparing (after adding a handler or version).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { startServer } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { apiInfo } from '../../src/protocol/index.js';

const PAGE = 'docs/clients.md';
const BEGIN = '<!-- api-versions: begin -->\n';
const END = '<!-- api-versions: end -->';

function render(served: readonly { apiKey: number; minVersion: number; maxVersion: number }[]): string {
  const rows = served.map((v) => `| ${v.apiKey} | ${apiInfo(v.apiKey)!.name} | ${v.minVersion === v.maxVersion ? v.minVersion : `${v.minVersion}-${v.maxVersion}`} |`);
  return ['| key | API | versions |', '| --- | --- | --- |', ...rows, ''].join('\n');
}

test('docs/clients.md lists the API versions a broker advertises', async () => {
  const server = await startServer({ config: parseBrokerConfig({ 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0' }) });
  try {
    const table = render(server.router.supportedVersions());
    const page = readFileSync(PAGE, 'utf8');
    const begin = page.indexOf(BEGIN);
    const end = page.indexOf(END);
    assert.ok(begin >= 0 && end > begin, `${PAGE} has the api-versions markers`);
    if (process.env.LOGLINE_WRITE_DOCS === '1') writeFileSync(PAGE, page.slice(0, begin + BEGIN.length) + table + page.slice(end));
    else assert.equal(page.slice(begin + BEGIN.length, end), table, `${PAGE}'s table (LOGLINE_WRITE_DOCS=1 rewrites it)`);
  } finally {
    await server.close();
  }
});
