// Commit latency of a metadata change as a user feels it: N CreateTopics requests (one topic of one
// partition each), one at a time through the wire, against a server on a fresh data directory.
// Prints JSON: per-request latency percentiles and the total. Usage: node dist/bench/metadata-commit.js [N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/node/index.js';
import { ClusterClient } from '../src/client/index.js';
import { ApiKey } from '../src/protocol/index.js';

const n = Number(process.argv[2] ?? 200);
const dataDir = mkdtempSync(join(tmpdir(), 'logline-mdbench-'));
const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir });
const client = new ClusterClient({ bootstrap: `127.0.0.1:${server.listeners[0]!.port}` });
try {
  const create = (name: string) => client.admin(ApiKey.CreateTopics, { topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }, 7);
  await create('warmup');
  const ms: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = await create(`bench-${i}`);
    if (r.topics[0].errorCode !== 0) throw new Error(`CreateTopics failed: ${r.topics[0].errorCode}`);
    ms.push(performance.now() - t);
  }
  const total = performance.now() - t0;
  ms.sort((a, b) => a - b);
  const p = (q: number) => Number(ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!.toFixed(2));
  console.log(JSON.stringify({ topics: n, totalMs: Number(total.toFixed(0)), p50Ms: p(0.5), p90Ms: p(0.9), p99Ms: p(0.99), maxMs: p(1), load: (await import('node:os')).loadavg()[0] }));
} finally {
  client.close();
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
}
