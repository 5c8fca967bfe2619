// MirrorMaker 2 across broker kills: clusters A and B are `logline server` processes, the mirror
// runs A->B at least once while a producer writes to A; B (the target) is SIGKILLed and restarted,
// then A (the source). Afterwards every record A acknowledged is on B, in A's per-partition order.
// LOGLINE_MIRROR_KILL_ROUNDS sets how many times each is killed (1 in the suite).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { ClusterClient } from '../../src/client/index.js';
import { parseProperties } from '../../src/config/index.js';
import { MirrorEngine, parseMirrorConfig } from '../../src/mirror/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { SingleNodeServer as Node } from '../broker/process-helpers.js';
import { eventually, freePort, readAll } from './helpers.js';

const ROUNDS = Number(process.env.LOGLINE_MIRROR_KILL_ROUNDS ?? '1');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Writes 20-record sends to each partition in turn until stopped; a failed send is retried (so A may hold it twice). */
async function produceUntil(bootstrap: string, topic: string, stop: () => boolean): Promise<string[]> {
  const kafka = new Kafka({ brokers: [bootstrap], clientId: 'mirror-kills', logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 200 } });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  const acknowledged: string[] = [];
  let connected = false;
  for (let i = 0; !stop(); ) {
    const partition = (i / 20) % 2;
    const messages = Array.from({ length: 20 }, (_, j) => ({ value: `v${i + j}`, partition }));
    try {
      if (!connected) { await producer.connect(); connected = true; }
      await producer.send({ topic, messages, acks: -1 });
      for (const m of messages) acknowledged.push(m.value);
      i += 20;
    } catch {
      await sleep(300);
    }
  }
  await producer.disconnect().catch(() => {});
  return acknowledged;
}

test('A->B at least once across SIGKILLs of the target broker and of the source broker: every acknowledged record is on B in order', { timeout: 240_000 }, async () => {
  const a = new Node(await freePort());
  const b = new Node(await freePort());
  let engine: MirrorEngine | null = null;
  let stop = false;
  try {
    await a.start();
    await b.start();
    const aClient = new ClusterClient({ bootstrap: a.bootstrap });
    const r = await aClient.admin(ApiKey.CreateTopics, { topics: [{ name: 'events', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 30_000, validateOnly: false }, 7);
    assert.equal(r.topics[0].errorCode, 0);
    aClient.close();
    const config = parseMirrorConfig(parseProperties([
      'clusters = A, B', `A.bootstrap.servers = ${a.bootstrap}`, `B.bootstrap.servers = ${b.bootstrap}`, 'A->B.enabled = true', 'A->B.topics = events',
      'replication.factor = 1', 'offset-syncs.topic.replication.factor = 1', 'heartbeats.topic.replication.factor = 1',
      'checkpoints.topic.replication.factor = 1', 'offset.storage.replication.factor = 1', 'refresh.topics.interval.seconds = 1', '',
    ].join('\n')));
    engine = new MirrorEngine({ config, clients: new Map([['A', { bootstrap: a.bootstrap }], ['B', { bootstrap: b.bootstrap }]]), offsetFlushIntervalMs: 500 });
    await engine.start();
    const writing = produceUntil(a.bootstrap, 'events', () => stop);
    const onB = async () => ((await readAll(b.bootstrap, 'A.events', 2).catch(() => null))?.get(0)?.length ?? 0);
    await eventually('the mirror to start copying', 30_000, async () => (await onB()) > 0);
    for (let round = 0; round < ROUNDS; round++) {
      await sleep(1500);
      await b.kill();
      await sleep(1000);
      await b.start();
      await sleep(1500);
      await a.kill();
      await sleep(1000);
      await a.start();
    }
    await sleep(1500);
    stop = true;
    const acknowledged = await writing;
    assert.ok(acknowledged.length > 0, 'the producer had records acknowledged');
    const source = await readAll(a.bootstrap, 'events', 2);
    const onA = new Set([...source.values()].flat().map((x) => x.value!.toString()));
    for (const v of acknowledged) assert.ok(onA.has(v), `${v} was acknowledged by A and is on A`);
    let target = new Map<number, { value: Buffer | null }[]>();
    await eventually('B to hold every record of A', 90_000, async () => {
      const t = await readAll(b.bootstrap, 'A.events', 2).catch(() => null);
      if (t === null) return false;
      target = t;
      return [0, 1].every((p) => new Set(t.get(p)!.map((x) => x.value!.toString())).size >= new Set(source.get(p)!.map((x) => x.value!.toString())).size);
    });
    let duplicates = 0;
    for (const p of [0, 1]) {
      const values = target.get(p)!.map((x) => x.value!.toString());
      duplicates += values.length - new Set(values).size;
      // A's records, in A's order, are a subsequence of B's (at least once may repeat some).
      let at = 0;
      for (const rec of source.get(p)!) {
        const v = rec.value!.toString();
        const found = values.indexOf(v, at);
        assert.ok(found >= 0, `A events-${p} ${v} is on B after position ${at}`);
        at = found + 1;
      }
    }
    console.log(`# ${acknowledged.length} records acknowledged by A across ${ROUNDS} kill(s) of B and of A; all on B in order, ${duplicates} duplicates`);
  } finally {
    stop = true;
    await engine?.stop();
    await b.kill();
    await a.kill();
  }
});
