// kafka-python and confluent-kafka-python (Debian's python3-kafka / python3-confluent-kafka)
// against the broker: every record comes back once, with its key, value and header; the same
// key always lands in the same partition; offsets are contiguous per partition.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runProcess, tempDataDir } from './process-helpers.js';
import { startServer } from '../../src/node/index.js';

const PYTHON = '/usr/bin/python3'; // Debian's packages are seen by the system python, not a pyenv one.
const hasModule = (m: string) => spawnSync(PYTHON, ['-c', `import ${m}`]).status === 0;

function skipReason(module: string, pkg: string): string | false {
  if (hasModule(module)) return false;
  // In CI every client must be there: a missing one fails instead of skipping.
  if (process.env.CI) throw new Error(`${pkg} is missing in CI (apt-get install -y ${pkg})`);
  return `${pkg} is not installed (apt-get install -y ${pkg})`;
}


interface Row { p: number; o: number; k: string; v: string; h: [string, string][]; ts: number }

function checkRoundTrip(out: { codecs: string[]; sent: number; rows: Row[] }, perCodec: number): void {
  assert.equal(out.rows.length, out.sent, `${out.rows.length} of ${out.sent} records came back`);
  const values = new Set(out.rows.map((r) => r.v));
  assert.equal(values.size, out.sent, 'no duplicates');
  const partitionOfKey = new Map<string, number>();
  const offsets = new Map<number, number[]>();
  for (const r of out.rows) {
    const [codec, i] = r.v.split('-');
    assert.equal(r.k, `k${Number(i) % 50}`, `key of ${r.v}`);
    assert.ok(out.codecs.includes(codec === 'None' ? 'none' : codec!), `codec of ${r.v}`);
    assert.deepEqual(r.h, [['h', 'v']]);
    assert.ok(r.ts > 1_600_000_000_000);
    if (partitionOfKey.has(r.k)) assert.equal(partitionOfKey.get(r.k), r.p, `${r.k} in two partitions`);
    partitionOfKey.set(r.k, r.p);
    offsets.set(r.p, [...(offsets.get(r.p) ?? []), r.o]);
  }
  for (const list of offsets.values()) assert.deepEqual(list, list.map((_, i) => i), 'contiguous offsets');
  assert.equal(out.sent, perCodec * out.codecs.length);
}

for (const [name, module, pkg, script] of [
  ['kafka-python', 'kafka', 'python3-kafka', 'test/broker/python/kafka_python_roundtrip.py'],
  ['confluent-kafka-python', 'confluent_kafka', 'python3-confluent-kafka', 'test/broker/python/confluent_roundtrip.py'],
] as const) {
  test(`${name}: admin create, produce with each codec it supports, consume back`, { skip: skipReason(module, pkg) }, async () => {
    const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir() });
    try {
      const r = await runProcess(PYTHON, [script, `127.0.0.1:${server.listeners[0]!.port}`, 'py-topic', '2000'], null, 120_000);
      assert.equal(r.code, 0, r.stderr);
      checkRoundTrip(JSON.parse(r.stdout), 2000);
    } finally {
      await server.close();
    }
  });
}
