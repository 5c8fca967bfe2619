// confluent-kafka-python's SchemaRegistryClient (Debian's python3-confluent-kafka, with
// python3-requests, python3-jsonschema and python3-protobuf) with its JSON Schema and Protobuf
// serializers: register, produce through Logline, consume and decode. Its Protobuf serializer
// registers the file as a base64 FileDescriptorProto, which the registry reads back as .proto text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';
import { startServer } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';

const PYTHON = '/usr/bin/python3'; // Debian's packages are seen by the system python.
const MODULES = ['confluent_kafka', 'requests', 'jsonschema', 'google.protobuf'];
const PACKAGES = 'python3-confluent-kafka python3-requests python3-jsonschema python3-protobuf';

function skipReason(): string | false {
  if (spawnSync(PYTHON, ['-c', MODULES.map((m) => `import ${m}`).join('; ')]).status === 0) return false;
  if (process.env.CI) throw new Error(`the schema registry's Python clients are missing in CI (apt-get install -y ${PACKAGES})`);
  return `confluent-kafka-python's schema registry client is not installed (apt-get install -y ${PACKAGES})`;
}

test('confluent-kafka-python: JSON Schema and Protobuf serializers register, produce, consume, decode', { skip: skipReason(), timeout: 180_000 }, async () => {
  const config = parseBrokerConfig({ 'node.id': '1', 'schema.registry.listener': '127.0.0.1:0', 'http.listener': '' });
  const server = await startServer({ config, listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(), schemaRegistry: true });
  try {
    const r = await runProcess(PYTHON, ['test/registry/python/registry_roundtrip.py', `127.0.0.1:${server.listeners[0]!.port}`, server.schemaRegistryUrl!], null, 150_000);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    assert.deepEqual(out.json, [{ sku: 'a', qty: 1 }, { sku: 'b', qty: 2 }]);
    assert.deepEqual(out.protobuf, [{ sku: 'c', qty: 3 }, { sku: 'd', qty: 4 }]);
    assert.deepEqual(out.subjects, ['py-orders-value', 'py-proto-orders-value']);
    assert.notEqual(out.ids['py-orders-value'], out.ids['py-proto-orders-value']);
    // The client caches what it registered; the registry itself answers with the file as .proto text.
    const stored = await (await fetch(`${server.schemaRegistryUrl}/schemas/ids/${out.ids['py-proto-orders-value']}`)).json() as { schema: string; schemaType: string };
    assert.equal(stored.schemaType, 'PROTOBUF');
    assert.match(stored.schema, /message Order \{\n {2}string sku = 1;\n {2}int64 qty = 2;\n\}/);
  } finally {
    await server.close();
  }
});
