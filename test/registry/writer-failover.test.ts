// The registry's writer dies: three `logline server` processes, registrations through all of them
// (two forward to the writer, the leader of `_schemas`-0), and the writer's process is SIGKILLed in
// the middle of them. Registrations in flight may fail (they are retried through another node,
// as a serializer would); afterwards every acknowledged registration keeps its id, no two schemas
// share an id, and every node, the restarted one included, answers the same. A register of a
// schema the subject has is answered by a surviving node while the dead writer is still named.
// The restarted writer's replica may end in a record it wrote but never had committed (a new
// writer put another one at that offset): its registry must not replay it (it did, 1 run in ~6 under
// load, while a restarted replica's high watermark started at its log end).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterNodeProcesses, killProcess, startClusterNodeProcess, until, type ClusterNodeProcess } from '../broker/process-helpers.js';
import { ClusterClient } from '../../src/client/index.js';
import { freePort } from '../../src/util/index.js';

const CT = 'application/vnd.schemaregistry.v1+json';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${path}`, {
    method, headers: { 'content-type': CT }, signal: AbortSignal.timeout(15_000),
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

const schemaOf = (i: number) => JSON.stringify({ type: 'record', name: `R${i}`, fields: [{ name: 'a', type: 'int' }] });

async function schemasLeader(port: number): Promise<number> {
  const client = new ClusterClient({ bootstrap: `127.0.0.1:${port}` });
  try {
    const [t] = await client.metadata(['_schemas']);
    return t?.errorCode === 0 ? t.partitions[0]?.leader ?? -1 : -1;
  } finally {
    client.close();
  }
}

test('three processes: the writer\'s node is SIGKILLed during registrations through every node; acknowledged ids stay, ids are unique, every node answers the same', { timeout: 180_000 }, async (t) => {
  const { nodes, voters } = await clusterNodeProcesses(3, 'll-test-registry-failover');
  const registryPorts = new Map<number, number>();
  for (const n of nodes) registryPorts.set(n.id, await freePort());
  const urlOf = (n: ClusterNodeProcess) => `http://127.0.0.1:${registryPorts.get(n.id)}`;
  // A dead broker is fenced (and its leaderships moved) after broker.session.timeout.ms.
  const sets = (n: ClusterNodeProcess) => [`schema.registry.listener=127.0.0.1:${registryPorts.get(n.id)}`, 'broker.session.timeout.ms=3000', 'broker.heartbeat.interval.ms=300'];
  try {
    await Promise.all(nodes.map((n) => startClusterNodeProcess(n, voters, sets(n))));
    // Compatibility NONE, so every registration is a new version whatever came before.
    await until(30_000, 'the global config written', async () => ((await call(urlOf(nodes[0]!), 'PUT', '/config', { compatibility: 'NONE' })).status === 200 ? true : undefined), 200);
    const writerId = await until(20_000, '_schemas has a leader', async () => { const l = await schemasLeader(nodes[0]!.brokerPort); return l > 0 ? l : undefined; });
    const writer = nodes.find((n) => n.id === writerId)!;
    t.diagnostic(`writer: node ${writerId}`);

    const acked = new Map<number, number>(); // schema index -> id
    let failedAttempts = 0;
    let next = 0;
    let stop = false;
    const live = () => nodes.filter((n) => n.child !== null);
    // Three registrars; each registration goes to a live node (in turn), and is retried through
    // another one until acknowledged.
    const registrars = Array.from({ length: 3 }, async (_, r) => {
      let turn = r;
      while (!stop) {
        const i = next++;
        const started = Date.now();
        for (;;) {
          assert.ok(Date.now() - started < 60_000, `schema ${i} not registered in 60 s`);
          const candidates = live();
          const n = candidates[turn++ % candidates.length]!;
          const res = await call(urlOf(n), 'POST', `/subjects/s${i % 3}/versions`, { schema: schemaOf(i) }).catch(() => null);
          if (res?.status === 200) { acked.set(i, res.json.id); break; }
          failedAttempts++;
          await sleep(100);
        }
      }
    });
    await until(30_000, '15 registrations acknowledged', async () => (acked.size >= 15 ? true : undefined));
    const ackedBeforeKill = acked.size;
    await killProcess(writer.child!);
    writer.child = null;
    t.diagnostic(`killed node ${writerId} after ${ackedBeforeKill} acknowledged registrations`);
    // A producer starting now registers a schema its subject has: a surviving node answers from its
    // own copy, while the metadata still names the dead writer (for broker.session.timeout.ms).
    const [known, knownId] = [...acked][0]!;
    const survivor = live()[0]!;
    await until(10_000, `node ${survivor.id} has replayed schema ${known}`, async () => ((await call(urlOf(survivor), 'POST', `/subjects/s${known % 3}`, { schema: schemaOf(known) })).status === 200 ? true : undefined), 50);
    const again = await call(urlOf(survivor), 'POST', `/subjects/s${known % 3}/versions`, { schema: schemaOf(known) });
    assert.equal(again.status, 200, `register of an existing schema with the writer dead: ${JSON.stringify(again.json)}`);
    assert.equal(again.json.id, knownId);
    await until(60_000, '15 more registrations after the kill', async () => (acked.size >= ackedBeforeKill + 15 ? true : undefined), 100);
    stop = true;
    await Promise.all(registrars);
    const newWriter = await schemasLeader(live()[0]!.brokerPort);
    t.diagnostic(`${acked.size} acknowledged, ${failedAttempts} failed attempts retried; the writer is now node ${newWriter}`);
    assert.notEqual(newWriter, writerId);

    // Every acknowledged registration keeps its id, and no two schemas share one.
    const ids = [...acked.values()];
    assert.equal(new Set(ids).size, ids.length, `ids ${ids}`);
    await startClusterNodeProcess(writer, voters, sets(writer));
    for (const n of nodes) {
      for (const [i, id] of acked) {
        // Generous: the restarted node replays `_schemas` from its own replica while CI runs other
        // tests beside it. A failure says what the node last answered and ends with its log.
        let last = '';
        const found = await until(60_000, `node ${n.id} finds schema ${i}`, async () => {
          const res = await call(urlOf(n), 'POST', `/subjects/s${i % 3}`, { schema: schemaOf(i) });
          last = `${res.status} ${JSON.stringify(res.json)}`;
          return res.status === 200 ? res.json : undefined;
        }).catch(async (e: unknown) => {
          // What every node answers for it, and each node's truncations: was it lost, or is one node stale?
          const others = await Promise.all(nodes.map(async (o) => `node ${o.id}: ${await call(urlOf(o), 'POST', `/subjects/s${i % 3}`, { schema: schemaOf(i) }).then((r) => `${r.status} ${JSON.stringify(r.json)}`, (x: Error) => x.message)}`));
          const truncations = nodes.map((o) => `node ${o.id}: ${o.log.split('\n').filter((l) => /truncat|leader epoch|led here|elect|unclean|ISR/.test(l)).slice(-20).join(' | ')}`);
          throw new Error(`${e instanceof Error ? e.message : String(e)}; last answer: ${last}; acknowledged id ${id}; answers now: ${others.join('; ')}; truncations and leaderships: ${truncations.join(' || ')}; node ${n.id}'s log ends: ${n.log.slice(-4000)}`);
        });
        assert.equal(found.id, id, `node ${n.id}: schema ${i}`);
      }
    }
    // Every node answers the same (the restarted one once it has replayed `_schemas`).
    const view = async (n: ClusterNodeProcess) => JSON.stringify(await Promise.all(
      ['/subjects', '/subjects/s0/versions', '/subjects/s1/versions', '/subjects/s2/versions', '/subjects/s2/versions/latest', `/schemas/ids/${Math.max(...ids)}`].map(async (p) => (await call(urlOf(n), 'GET', p)).json),
    ));
    const views = await until(30_000, 'every node answers the same', async () => {
      const seen = await Promise.all(nodes.map(view));
      return seen.every((v) => v === seen[0]) ? seen : undefined;
    }, 200);
    // Ids across all versions (acknowledged or not) are unique too.
    const allIds: number[] = [];
    for (const s of ['s0', 's1', 's2']) {
      for (const v of (await call(urlOf(nodes[0]!), 'GET', `/subjects/${s}/versions`)).json as number[]) {
        allIds.push((await call(urlOf(nodes[0]!), 'GET', `/subjects/${s}/versions/${v}`)).json.id);
      }
    }
    assert.equal(new Set(allIds).size, allIds.length, `ids of all versions ${allIds}`);
    assert.ok(allIds.length >= acked.size);
    t.diagnostic(`${allIds.length} versions in all; views: ${views[0]!.length} bytes each`);
  } finally {
    await Promise.all(nodes.map((n) => (n.child ? killProcess(n.child) : Promise.resolve())));
  }
});
