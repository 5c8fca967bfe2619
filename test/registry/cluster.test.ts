// The registry on a three-node cluster: registrations through each node (two of them forward to
// the writer, the leader of `_schemas`-0), ids unique and shared for the same schema, and every
// node answering the same once it has replayed `_schemas`; on four nodes, the one outside
// `_schemas`' three replicas writes and reads through the writer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startCluster } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';

const CT = 'application/vnd.schemaregistry.v1+json';
async function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${path}`, { method, headers: { 'content-type': CT }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, json: await res.json() };
}
// Each a new schema, and each BACKWARD compatible with the others (a field with a default comes, another goes).
const schemaOf = (i: number) => JSON.stringify({ type: 'record', name: 'R', fields: [{ name: 'a', type: 'int' }, { name: `f${i}`, type: 'int', default: 0 }] });

test('three nodes: register through each, ids unique, every node answers the same', { timeout: 120_000 }, async () => {
  const cluster = await startCluster({ nodes: 3, schemaRegistry: true });
  try {
    const urls = cluster.nodes.map((n) => n.schemaRegistryUrl!);
    assert.equal(urls.length, 3);
    const ids: number[] = [];
    for (let i = 0; i < 9; i++) {
      // Read-your-writes through the node written to: its answer waits for its own replay.
      const url = urls[i % 3]!;
      const r = await call(url, 'POST', `/subjects/s${i % 4}/versions`, { schema: schemaOf(i) });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      ids.push(r.json.id);
      const back = await call(url, 'GET', `/schemas/ids/${r.json.id}`);
      assert.equal(back.status, 200, JSON.stringify(back.json));
    }
    assert.equal(new Set(ids).size, ids.length, `ids ${ids}`);
    // The same schema through another node under another subject: the same id.
    const again = await call(urls[2]!, 'POST', '/subjects/other/versions', { schema: schemaOf(0) });
    assert.equal(again.json.id, ids[0]);
    // Every node converges on the same answers.
    const views = async (url: string) => JSON.stringify(await Promise.all(['/subjects', '/subjects/s0/versions', `/schemas/ids/${ids[8]}`, '/subjects/s1/versions/latest'].map(async (p) => (await call(url, 'GET', p)).json)));
    const deadline = Date.now() + 10_000;
    let seen: string[] = [];
    while (Date.now() < deadline) {
      seen = await Promise.all(urls.map(views));
      if (seen.every((v) => v === seen[0])) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(seen.every((v) => v === seen[0]), seen.join('\n'));
    assert.deepEqual(JSON.parse(seen[0]!)[0], ['other', 's0', 's1', 's2', 's3']);
  } finally {
    await cluster.close();
  }
});

test('four nodes: a node without a replica of _schemas (RF 3) reads and writes through the writer', { timeout: 120_000 }, async () => {
  const cluster = await startCluster({ nodes: 4, schemaRegistry: true });
  try {
    const urls = cluster.nodes.map((n) => n.schemaRegistryUrl!);
    const first = await call(urls[0]!, 'POST', '/subjects/x-value/versions', { schema: schemaOf(100) });
    assert.equal(first.status, 200, JSON.stringify(first.json));
    // The node that holds no replica of _schemas-0.
    const client = new ClusterClient({ bootstrap: `127.0.0.1:${cluster.nodes[0]!.brokerPort}` });
    let replicas: number[];
    try {
      const [t] = await client.metadata(['_schemas']);
      replicas = t!.partitions[0]!.replicas;
    } finally {
      client.close();
    }
    const outsider = cluster.nodes.findIndex((n) => !replicas.includes(n.nodeId));
    assert.ok(outsider >= 0, `replicas ${replicas}`);
    // Answered with the writer's answer (it used to wait for a replay this node cannot do, and time out with 50002).
    const r = await call(urls[outsider]!, 'POST', '/subjects/x-value/versions', { schema: schemaOf(101) });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const back = await call(urls[outsider]!, 'GET', `/schemas/ids/${r.json.id}`);
    assert.equal(back.status, 200, JSON.stringify(back.json));
  } finally {
    await cluster.close();
  }
});
