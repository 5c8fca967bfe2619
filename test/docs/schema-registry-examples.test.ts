// The producer and consumer examples of README.md's schema registry section work as written: each code block
// after `<!-- example: FILE ... -->` is saved as FILE and run (node for .mjs, Debian's python3 for
// .py) against a node serving the schema registry, with `localhost:9092` and
// `http://localhost:8081` pointed at it, and must print what the page says it prints
// ("`node FILE` prints `...`").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';

const PAGE = 'README.md';
const PYTHON = '/usr/bin/python3'; // Debian's packages are seen by the system python.
const PYTHON_PACKAGES = 'python3-confluent-kafka python3-requests python3-jsonschema';

interface Example { file: string; code: string; prints: string }

function examples(): Example[] {
  const text = readFileSync(PAGE, 'utf8');
  return [...text.matchAll(/^<!-- example: (\S+) .*-->\n```\w+\n([\s\S]*?)^```$/gm)].map((m) => {
    const file = m[1]!;
    const said = new RegExp(`\`(?:node|python3) ${file.replace('.', '\\.')}\` prints \`([^\`]+)\``).exec(text);
    assert.ok(said, `${PAGE} says what ${file} prints`);
    return { file, code: m[2]!, prints: said[1]! };
  });
}

function pythonSkip(): string | false {
  if (spawnSync(PYTHON, ['-c', 'import confluent_kafka, requests, jsonschema']).status === 0) return false;
  if (process.env.CI) throw new Error(`confluent-kafka-python is missing in CI (apt-get install -y ${PYTHON_PACKAGES})`);
  return `confluent-kafka-python's schema registry client is not installed (apt-get install -y ${PYTHON_PACKAGES})`;
}

let server: ServerHandle;
let dir: string;

before(async () => {
  const config = parseBrokerConfig({ 'node.id': '1', 'schema.registry.listener': '127.0.0.1:0', 'http.listener': '' });
  server = await startServer({ config, listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(), schemaRegistry: true });
  dir = mkdtempSync(join(tmpdir(), 'logline-registry-examples-'));
  // The page's `npm install kafkajs @kafkajs/confluent-schema-registry`: this checkout's dev dependencies.
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
});
after(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const found = examples();

test(`${PAGE} has the Node Avro and the Python JSON Schema examples`, () => {
  assert.deepEqual(found.map((e) => e.file), ['avro-orders.mjs', 'json_shipments.py']);
});

// In the page's order: the Avro one registers the first schema (its output names id 1).
for (const example of found) {
  const python = example.file.endsWith('.py');
  test(`${PAGE}: ${example.file} prints "${example.prints}"`, { skip: python ? pythonSkip() : false, timeout: 150_000 }, async () => {
    const l = server.listeners[0]!;
    const code = example.code.replaceAll('http://localhost:8081', server.schemaRegistryUrl!).replaceAll('localhost:9092', `${l.host}:${l.port}`);
    assert.notEqual(code, example.code, 'the example names the registry and the broker');
    const path = join(dir, example.file);
    writeFileSync(path, code);
    const r = await runProcess(python ? PYTHON : process.execPath, [path], null, 120_000);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), example.prints, r.stderr);
  });
}
