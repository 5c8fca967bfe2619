// KIP-966's eligible leader replicas on real processes: one controller-only `logline server` and
// three broker-only ones (the controller quorum survives every broker going down), a topic with RF 3
// and min.insync.replicas 2, an acks=all kafkajs producer. One follower is SIGKILLed, the other shut
// down cleanly (the ISR shrinks to the leader; the second follower goes into the ELR, and acks=all is
// refused from then on), then the leader is SIGKILLed: the ISR empties. Restarted, the follower in
// the ELR is elected leader from it (before KIP-966 the partition stayed offline until the last ISR
// member returned); DescribeTopicPartitions and `logline topic describe` show the ELR. The old
// leader, back from its unclean shutdown, leaves the ELR; once everyone is back, every acknowledged
// record is read back at its offset, none twice, a consumer group reads them all, and each
// replica's files match.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { BrokerConnection } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { clusterNodeProcesses, killProcess, runProcess, startClusterNodeProcess, until, within, type ClusterNodeProcess } from './process-helpers.js';
import {
  createFaultTopic, dumpLogs, FAULT_NODE_SETTINGS, librdkafkaSkip, partitionsOn, sleep, untilAcked, untilFullIsr,
  verifyAcknowledged, verifyReplicaFiles, type FaultProducer, type ProducerResult,
} from './replication-faults.js';

const TOPIC = 'elr';

interface ElrView { leader: number; isr: number[]; elr: number[]; lastKnownElr: number[] }

/**
 * A kafkajs acks=all producer writing batches of five to partition 0, without retries (a failed send
 * is not sent again, so no value can be written twice). Not idempotent: kafkajs asks the Metadata
 * response's controller for a producer id, which here is the controller-only node, not a broker.
 */
function startProducer(nodes: ClusterNodeProcess[]): FaultProducer {
  const kafka = new Kafka({ clientId: 'elr', brokers: nodes.map((n) => `127.0.0.1:${n.brokerPort}`), logLevel: logLevel.NOTHING, connectionTimeout: 3000, requestTimeout: 8000, retry: { retries: 0 } });
  const result: ProducerResult = { acks: [], failures: [], sent: 0 };
  let stopping = false;
  let producer: Producer | null = null;
  const loop = (async () => {
    for (let n = 0; !stopping; n++) {
      const values = Array.from({ length: 5 }, (_, i) => `js-${n * 5 + i}`);
      try {
        if (producer === null) {
          const fresh = kafka.producer({ retry: { retries: 0 }, allowAutoTopicCreation: false });
          producer = fresh;
          await fresh.connect();
        }
        result.sent += values.length;
        const [md] = await producer.send({ topic: TOPIC, acks: -1, timeout: 5000, messages: values.map((value) => ({ partition: 0, value })) });
        values.forEach((v, i) => result.acks.push({ p: 0, o: Number(md!.baseOffset) + i, v }));
      } catch (e) {
        result.failures.push(`${values[0]}..: ${(e as Error).message}`);
        await producer?.disconnect().catch(() => {});
        producer = null;
        await sleep(200);
      }
      await sleep(20);
    }
    await producer?.disconnect().catch(() => {});
  })();
  return {
    acked: () => result.acks.length, ackedOn: () => result.acks.length, failed: () => result.failures.length,
    abort: () => { stopping = true; void producer?.disconnect().catch(() => {}); },
    async stop() { stopping = true; await within(60_000, 'the kafkajs producer stopping', loop); return result; },
  };
}

/** SIGTERM: a controlled shutdown; waits for the process to exit cleanly. */
async function stopProcess(n: ClusterNodeProcess): Promise<void> {
  const child = n.child!;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  const code = await within(60_000, `node ${n.id} shutting down`, exited);
  assert.equal(code, 0, `node ${n.id} exit code`);
  n.child = null;
}

/** Partition 0 of the topic as DescribeTopicPartitions on `node` reports it, or undefined when it does not answer. */
async function describeOn(node: ClusterNodeProcess): Promise<ElrView | undefined> {
  let c: BrokerConnection | null = null;
  try {
    c = await BrokerConnection.open({ host: '127.0.0.1', port: node.brokerPort, connectTimeoutMs: 3000, requestTimeoutMs: 3000 });
    const r: any = await c.send(ApiKey.DescribeTopicPartitions, 0, { topics: [{ name: TOPIC }], responsePartitionLimit: 10, cursor: null });
    const p = r.topics[0]?.partitions[0];
    return p === undefined ? undefined : { leader: p.leaderId, isr: p.isrNodes, elr: p.eligibleLeaderReplicas, lastKnownElr: p.lastKnownElr };
  } catch {
    return undefined;
  } finally {
    c?.close();
  }
}

/** Waits until `node` reports partition 0 as `ok` says; fails with what it last reported. */
async function untilView(node: ClusterNodeProcess, timeoutMs: number, what: string, ok: (v: ElrView) => boolean): Promise<ElrView> {
  let last: ElrView | undefined;
  try {
    return await until(timeoutMs, what, async () => { last = await describeOn(node); return last !== undefined && ok(last) ? last : undefined; }, 200);
  } catch (e) {
    throw new Error(`${(e as Error).message}; node ${node.id} last reported ${JSON.stringify(last)}`);
  }
}

test('RF 3, min.insync.replicas 2: with the ISR emptied, the restarted follower in the ELR is elected leader and no acks=all acknowledged record is lost', { timeout: 300_000 }, async (t) => {
  const skip = await librdkafkaSkip();
  if (skip) { t.skip(skip); return; }
  const { nodes, voters } = await clusterNodeProcesses(1, 'll-test-elr', { brokers: 3 });
  const brokers = nodes.filter((n) => n.brokerPort !== 0);
  const node = (id: number) => brokers.find((n) => n.id === id)!;
  const producers: FaultProducer[] = [];
  try {
    await Promise.all(nodes.map((n) => startClusterNodeProcess(n, voters, FAULT_NODE_SETTINGS)));
    await createFaultTopic(brokers, TOPIC, 1);
    const [initial] = await untilFullIsr(brokers, TOPIC, 60_000, 'after creation');
    const leader = node(initial!.leader);
    const [first, second] = brokers.filter((n) => n !== leader);
    t.diagnostic(`leader ${leader.id}, followers ${first!.id} and ${second!.id}`);
    const js = startProducer(brokers);
    producers.push(js);
    await untilAcked(brokers, TOPIC, { kafkajs: js }, 'first acknowledgements');
    await sleep(2000);

    // The first follower dies: fenced, out of the ISR, which stays at min ISR (no ELR); writes go on.
    await killProcess(first!.child!);
    first!.child = null;
    await untilView(leader, 60_000, `follower ${first!.id} out of the ISR`, (v) => v.isr.length === 2 && !v.isr.includes(first!.id));
    await untilAcked(brokers, TOPIC, { kafkajs: js }, 'acknowledgements with an ISR of two');
    // The second shuts down cleanly (SIGTERM: a controlled shutdown, its epoch in the clean-shutdown
    // marker): the ISR falls below min ISR, so it goes into the ELR; acks=all is refused from now on.
    await stopProcess(second!);
    const shrunk = await untilView(leader, 60_000, `follower ${second!.id} in the ELR`, (v) => v.isr.length === 1);
    assert.deepEqual(shrunk, { leader: leader.id, isr: [leader.id], elr: [second!.id], lastKnownElr: [] });
    await sleep(1000);
    const acked = js.acked();
    await sleep(2000);
    assert.equal(js.acked(), acked, 'no acks=all write is acknowledged with the ISR below min.insync.replicas');
    const result: ProducerResult = await js.stop();
    producers.length = 0;
    assert.ok(result.acks.length > 0 && result.failures.length > 0, `${result.acks.length} acknowledged, ${result.failures.length} refused`);

    // The leader dies too: once its session runs out the ISR is empty and the partition has no leader.
    await killProcess(leader.child!);
    leader.child = null;
    // The follower in the ELR comes back and is elected from it (its records are every committed one).
    await within(60_000, `restart of node ${second!.id}`, startClusterNodeProcess(second!, voters, FAULT_NODE_SETTINGS));
    const elected = await untilView(second!, 90_000, `node ${second!.id} elected from the ELR`, (v) => v.leader === second!.id);
    assert.deepEqual(elected, { leader: second!.id, isr: [second!.id], elr: [leader.id], lastKnownElr: [] });
    const cli = await runProcess(process.execPath, ['bin/logline.js', 'topic', 'describe', TOPIC, '-b', `127.0.0.1:${second!.brokerPort}`, '--json']);
    assert.equal(cli.code, 0, cli.stderr);
    const described = JSON.parse(cli.stdout).partitions[0];
    assert.deepEqual([described.leader, described.isr, described.elr, described.lastKnownElr], [second!.id, [second!.id], [leader.id], []]);

    // The old leader comes back after its SIGKILL, an unclean shutdown: it leaves the ELR (it may
    // have lost unflushed records), then catches up and joins the ISR (min ISR again: the high
    // watermark moves); then the first follower. Every acknowledged record is where it was.
    await within(60_000, `restart of node ${leader.id}`, startClusterNodeProcess(leader, voters, FAULT_NODE_SETTINGS));
    await untilView(second!, 60_000, `node ${leader.id} back in the ISR`, (v) => v.isr.length === 2 && v.elr.length === 0);
    const controller = nodes.find((n) => n.brokerPort === 0)!;
    assert.match(controller.log, new RegExp(`broker ${leader.id} registers after an unclean shutdown .*: it leaves the eligible leader replicas of 1 partition`));
    assert.doesNotMatch(controller.log, new RegExp(`broker ${second!.id} registers after an unclean shutdown`));
    await within(60_000, `restart of node ${first!.id}`, startClusterNodeProcess(first!, voters, FAULT_NODE_SETTINGS));
    const [full] = await untilFullIsr(brokers, TOPIC, 60_000, 'at the end');
    assert.equal(full!.leader, second!.id);
    const logs = await verifyAcknowledged(t, brokers, TOPIC, 1, { kafkajs: result });
    for (const n of brokers) assert.doesNotMatch(n.log, /(handler|encode) error on API/, `node ${n.id}: no request made a handler throw`);
    for (const n of brokers) { await killProcess(n.child!); n.child = null; }
    await verifyReplicaFiles(brokers, TOPIC, logs);
  } catch (e) {
    t.diagnostic(`node logs: ${dumpLogs(nodes, TOPIC)}`);
    throw e;
  } finally {
    for (const p of producers) p.abort();
    await Promise.all(nodes.map((n) => (n.child ? killProcess(n.child) : Promise.resolve())));
  }
});
