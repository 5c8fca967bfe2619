// The curl examples of docs/schema-registry.md work as written: the ```sh block after
// `<!-- curl-examples ... -->` is split into its commands (a `\` at a line's end continues it), each
// run by sh as the page spells it, with `http://localhost:8081` pointed at a fresh node's registry,
// in the page's order. The comment line under a command is its answer: curl's output must be that
// JSON. Skipped, saying why, only where curl is not installed (CI installs it: .ci/run).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';

const PAGE = 'docs/schema-registry.md';

interface Example { command: string; answer: unknown }

function examples(): Example[] {
  const text = readFileSync(PAGE, 'utf8');
  const m = /^<!-- curl-examples .*-->\n```sh\n([\s\S]*?)^```$/m.exec(text);
  assert.ok(m, `${PAGE} marks its curl block with <!-- curl-examples ... -->`);
  const lines = m[1]!.split('\n');
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('curl ')) {
      assert.ok(lines[i]!.startsWith('#') || lines[i]!.trim() === '', `${PAGE}: a curl block line that is neither a command nor a comment: ${lines[i]}`);
      continue;
    }
    let command = lines[i]!;
    while (command.endsWith('\\')) command = `${command}\n${lines[++i]!}`;
    const answer = lines[i + 1] ?? '';
    assert.ok(answer.startsWith('# '), `${PAGE}: the command "${command}" has no answer under it`);
    let json: unknown;
    try { json = JSON.parse(answer.slice(2)); } catch (e) { assert.fail(`${PAGE}: the answer of "${command}" is not JSON: ${answer} (${String(e)})`); }
    out.push({ command, answer: json });
    i++;
  }
  return out;
}

function curlSkip(): string | false {
  if (spawnSync('curl', ['--version']).status === 0) return false;
  return 'curl is not installed (apt-get install -y curl): the curl examples of docs/schema-registry.md are not run';
}

let server: ServerHandle | undefined;

before(async () => {
  if (curlSkip() !== false) return;
  const config = parseBrokerConfig({ 'node.id': '1', 'schema.registry.listener': '127.0.0.1:0', 'http.listener': '' });
  server = await startServer({ config, listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(), schemaRegistry: true });
});
after(async () => {
  await server?.close();
});

const found = examples();

test(`${PAGE} has curl examples that register, read, check and configure`, () => {
  const paths = found.map((e) => /http:\/\/localhost:8081(\/[^\s'?]*)/.exec(e.command)?.[1]);
  assert.deepEqual(paths, ['/subjects/payments-value/versions', '/subjects/payments-value/versions/latest', '/schemas/ids/1', '/compatibility/subjects/payments-value/versions/latest', '/config/payments-value', '/config/payments-value']);
});

test(`${PAGE}: each curl example answers what the page says`, { skip: curlSkip(), timeout: 60_000 }, async () => {
  for (const example of found) {
    const command = example.command.replaceAll('http://localhost:8081', server!.schemaRegistryUrl!);
    assert.notEqual(command, example.command, `"${example.command}" names the registry`);
    const r = await runProcess('sh', ['-c', command], null, 30_000);
    assert.equal(r.code, 0, `${example.command}\n${r.stderr}`);
    let got: unknown;
    try { got = JSON.parse(r.stdout); } catch { assert.fail(`${example.command}\nanswered what is not JSON: ${r.stdout}`); }
    assert.deepEqual(got, example.answer, example.command);
  }
});
