// Issue 33's slow and lossy links (the kernel here has no netem): three `logline server` processes,
// each behind a fault proxy (test/broker/fault-proxy.ts) that its broker listener advertises, so
// that clients after bootstrap and followers replicating from a leader all go through the proxies;
// the kill run's RF 3 / min.insync.replicas 2 topic and its two idempotent acks=all producers. The
// phases, each LOGLINE_SLOW_LINK_SECONDS long (3 by default): added latency on every link; a
// bandwidth limit on every link; connections of random nodes dropped again and again; one leader's
// links half-open (its proxy stops reading and writing, its sockets stay open) for longer than a
// replica's lag time, while a client writes to it at acks=1 by its own port (so that it shrinks
// that partition's ISR to itself). Through each, acks=all writes go on (on the other partitions
// while a leader is unreachable), a request through a half-open link fails at the client's own
// timeout instead of hanging, every ISR is full again after each phase, and at the end nothing
// acknowledged is lost (the acks=1 writes to the half-open leader included).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerConnection, ClientError, ClusterClient } from '../../src/client/index.js';
import { buildRecordBatch } from '../../src/records/index.js';
import { consumeAll } from './log-reader.js';
import { ApiKey } from '../../src/protocol/index.js';
import { Prng } from '../../src/util/index.js';
import { FaultProxy } from './fault-proxy.js';
import { clusterNodeProcesses, within } from './process-helpers.js';
import {
  bootstrapOf, guardFaultRun, FAULT_NODE_SETTINGS, librdkafkaSkip, partitionsOn, sleep, untilAcked, untilFullIsr, finishFaultRun, startFaultRun, type FaultProducer,
} from './replication-faults.js';

const PHASE_MS = Number(process.env['LOGLINE_SLOW_LINK_SECONDS'] ?? 3) * 1000;
const SEED = Number(process.env['LOGLINE_SLOW_LINK_SEED'] ?? Date.now() % 1_000_000);
const TOPIC = 'slowlinks';
const PARTITIONS = 3;
const LAG_MS = 5000; // replica.lag.time.max.ms of FAULT_NODE_SETTINGS

test('RF 3, min.insync.replicas 2, every broker behind a fault proxy: latency, a bandwidth limit, dropped connections and a half-open leader under librdkafka and kafkajs acks=all producers; nothing acknowledged lost, nothing hangs',
  { timeout: 240_000 + 8 * PHASE_MS }, async (t) => {
    const skip = await librdkafkaSkip();
    if (skip) { t.skip(skip); return; }
    t.diagnostic(`seed ${SEED} (LOGLINE_SLOW_LINK_SEED=${SEED} replays the same choices)`);
    const prng = new Prng(SEED);
    const { nodes, voters } = await clusterNodeProcesses(3, 'll-test-slow-links');
    const proxies: FaultProxy[] = [];
    const producers: FaultProducer[] = [];
    await guardFaultRun(t, nodes, TOPIC, producers, async () => {
      for (const n of nodes) {
        const proxy = await FaultProxy.start({ host: '127.0.0.1', port: n.brokerPort });
        proxies.push(proxy);
        n.advertisedPort = proxy.port;
      }
      const all = (faults: Parameters<FaultProxy['set']>[0]) => { for (const p of proxies) p.set(faults); };
      const healAll = () => { for (const p of proxies) p.heal(); };
      const run = await startFaultRun(nodes, voters, TOPIC, PARTITIONS, producers);
      let partitions = run.partitions;
      const { py, js, untilBothAcked } = run;
      const through = () => proxies.map((p) => `${(p.passed.toServer / 1024).toFixed(0)}/${(p.passed.toClient / 1024).toFixed(0)} KiB`).join(', ');

      // 1. Latency on every link, both ways (a cross-region cluster).
      all({ toServer: { latencyMs: 40 }, toClient: { latencyMs: 40 } });
      await untilBothAcked('with 40 ms more each way on every link');
      await sleep(PHASE_MS);
      await untilBothAcked('still, with 40 ms more each way on every link');
      healAll();
      partitions = await untilFullIsr(nodes, TOPIC, 60_000, 'after the latency phase');
      t.diagnostic(`latency: both producers went on; through the proxies (to/from each broker) ${through()}`);

      // 2. A bandwidth limit on every link, both ways.
      all({ toServer: { bytesPerSecond: 32 * 1024 }, toClient: { bytesPerSecond: 32 * 1024 } });
      await untilBothAcked('with every link at 32 KiB/s');
      await sleep(PHASE_MS);
      await untilBothAcked('still, with every link at 32 KiB/s');
      healAll();
      partitions = await untilFullIsr(nodes, TOPIC, 60_000, 'after the bandwidth phase');
      t.diagnostic(`bandwidth: both producers went on; ${through()}`);

      // 3. Dropped connections: a random node's connections reset, again and again.
      let dropped = 0;
      const dropsUntil = Date.now() + PHASE_MS;
      while (Date.now() < dropsUntil) {
        dropped += proxies[prng.int(proxies.length)]!.dropAll();
        await sleep(200 + prng.int(600));
      }
      await untilBothAcked('after connections were dropped');
      partitions = await untilFullIsr(nodes, TOPIC, 60_000, 'after the drops');
      t.diagnostic(`drops: ${dropped} connections reset; both producers went on`);

      // 4. A leader's links half-open: its proxy neither reads nor writes, the sockets stay open,
      // new connections are accepted and then hang too; longer than a replica's lag time.
      const victim = partitions[prng.int(PARTITIONS)]!.leader;
      const vi = nodes.findIndex((n) => n.id === victim);
      const proxy = proxies[vi]!;
      proxy.set({ stalled: true });
      const stalledAt = Date.now();
      // A client's request into the half-open link ends at the client's own timeout.
      const probe = await BrokerConnection.open({ host: '127.0.0.1', port: proxy.port, requestTimeoutMs: 2000, connectTimeoutMs: 2000 });
      try {
        const startedAt = Date.now();
        const outcome = await within(30_000, 'a request through a half-open link', probe.send(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }).then(() => 'answered', (e: unknown) => e));
        assert.ok(outcome instanceof ClientError, `a request through a half-open link ended with ${String(outcome)}, not the client's timeout`);
        t.diagnostic(`half-open: a 2000 ms request through it failed after ${Date.now() - startedAt} ms (${outcome.message})`);
      } finally {
        probe.close();
      }
      // The partitions the others lead take writes meanwhile.
      await untilAcked(nodes, TOPIC, { librdkafka: py }, `librdkafka acknowledged while node ${victim}'s links are half-open`);
      // A client that reaches the victim by another way (its own port) writes at acks=1 to a
      // partition it leads: its followers, behind the half-open links, fall behind, and it shrinks
      // the ISR to itself after the lag time; what it acknowledged is kept.
      const led = partitions.find((p) => p.leader === victim)!.partition;
      const direct = await BrokerConnection.open({ host: '127.0.0.1', port: nodes[vi]!.brokerPort, requestTimeoutMs: 10_000 });
      const directAcks: { o: bigint; v: string }[] = [];
      try {
        for (let i = 0; Date.now() - stalledAt < LAG_MS + PHASE_MS || i < 5; i++) {
          const v = `direct-${i}`;
          const r = await direct.send(ApiKey.Produce, 9, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: led, records: await buildRecordBatch({ records: [{ value: Buffer.from(v) }] }) }] }] });
          const pr = r.responses[0].partitionResponses[0];
          if (pr.errorCode === 0) directAcks.push({ o: pr.baseOffset, v });
          await sleep(200);
        }
        await within(60_000, `node ${victim} shrinking the ISR of partition ${led} to itself`, (async () => {
          for (;;) {
            const p = (await partitionsOn(nodes[vi]!, TOPIC))?.find((x) => x.partition === led);
            if (p !== undefined && p.isr.length === 1 && p.isr[0] === victim) return;
            await sleep(200);
          }
        })());
      } finally {
        direct.close();
      }
      const views = await Promise.all(nodes.map(async (n) => `node ${n.id}: ${(await partitionsOn(n, TOPIC))?.map((p) => `p${p.partition} leader ${p.leader} isr [${p.isr}]`).join('; ') ?? 'no answer'}`));
      t.diagnostic(`half-open: node ${victim} unreachable through its proxy for ${Date.now() - stalledAt} ms; ${views.join(' | ')}`);
      proxy.set({ stalled: false });
      proxy.dropAll(); // what a half-open TCP connection ends in, once a keepalive or a write times out
      partitions = await untilFullIsr(nodes, TOPIC, 60_000, `after node ${victim}'s links healed`);
      const healedAcks = await untilBothAcked(`both producers acknowledged after node ${victim}'s links healed`);
      const client = new ClusterClient({ bootstrap: bootstrapOf(nodes), requestTimeoutMs: 10_000 });
      try {
        const values = await consumeAll(client, TOPIC, led);
        const lost = directAcks.filter((a) => values[Number(a.o)] !== a.v);
        assert.deepEqual(lost, [], `acks=1 writes to node ${victim} while its links were half-open, not where they were acknowledged`);
      } finally {
        client.close();
      }
      t.diagnostic(`half-open: ${directAcks.length} acks=1 writes straight to node ${victim} (partition ${led}, ISR shrunk to it) all kept`);
      t.diagnostic(`half-open: healed; first acknowledgements after the full ISR: ${healedAcks}; leaders now [${partitions.map((p) => `${p.partition}:${p.leader}@${p.leaderEpoch}`)}]; ${through()}`);

      await finishFaultRun(t, nodes, TOPIC, PARTITIONS, { librdkafka: py, kafkajs: js }, producers);
    }, { after: async () => { for (const p of proxies) await p.close(); } });
  });
