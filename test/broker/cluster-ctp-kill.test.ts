// Exactly-once across broker kills: three `logline server` processes (RF 3, min.insync.replicas 2,
// replicated __consumer_offsets and __transaction_state), a transactional consume-transform-produce
// processor (librdkafka through confluent-kafka-python, test/broker/python/ctp_processor.py) and a
// random broker SIGKILLed and restarted LOGLINE_CTP_KILLS times (default 3) while it works. Each
// round adds a chunk of input while all three brokers are in every ISR, waits a random moment,
// kills a broker (the coordinators and partition leaders on it move), restarts it and waits until
// it is back in every ISR. A processor that gives up (a fatal transaction error) is started again,
// as a Kafka Streams thread would be. At the end a read_committed consumer must find every input
// record in the output exactly once, and nothing else.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';
import { Prng } from '../../src/util/index.js';
import { clusterNodeProcesses, killProcess, runProcess, startClusterNodeProcess, tempDataDir, within, type ClusterNodeProcess } from './process-helpers.js';
import { assertExactlyOnceOutput, CTP_SCRIPT as SCRIPT, PYTHON } from './ctp-output.js';

const KILLS = Number(process.env.LOGLINE_CTP_KILLS ?? 3);
const PARTITIONS = 4;
/** Input added per round, before each kill. */
const CHUNK_RECORDS = 2000;
const RECORDS_PER_TXN = 20;
const NODE_SETTINGS = [
  'broker.session.timeout.ms=3000', 'broker.heartbeat.interval.ms=500', 'min.insync.replicas=2', 'default.replication.factor=3',
  'offsets.topic.replication.factor=3', 'transaction.state.log.replication.factor=3', 'transaction.state.log.min.isr=2',
  'offsets.topic.num.partitions=6', 'transaction.state.log.num.partitions=6', 'group.initial.rebalance.delay.ms=0',
];
const INTERNAL_AND_TEST_TOPICS = ['ctp-in', 'ctp-out', '__consumer_offsets', '__transaction_state'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const hasConfluent = spawnSync(PYTHON, ['-c', 'import confluent_kafka']).status === 0;
if (!hasConfluent && process.env.CI) throw new Error('python3-confluent-kafka is missing in CI');

function startProcessor(bootstrap: string, stopFile: string): { child: ChildProcess; exited: Promise<number | null>; output: () => string } {
  // The consumer's group protocol trace goes to the processor's log, kept for a failure's post-mortem.
  const child = spawn(PYTHON, [SCRIPT, 'run', bootstrap, 'ctp-in', 'ctp-out', 'ctp-group', 'ctp-txn', String(RECORDS_PER_TXN), stopFile],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CTP_DEBUG: 'cgrp' } });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => out };
}

let nodes: ClusterNodeProcess[] = [];
let processor: ReturnType<typeof startProcessor> | null = null;
let lastProcessorOutput = '';
after(async () => {
  if (processor) {
    lastProcessorOutput = processor.output();
    await killProcess(processor.child);
  }
  await Promise.all(nodes.map((n) => (n.child ? killProcess(n.child) : Promise.resolve())));
  // The brokers' and the processor's output, for a failure's post-mortem.
  for (const n of nodes) writeFileSync(`${n.dir}.log`, n.log);
  if (nodes.length > 0) console.log(`# broker logs: ${nodes.map((n) => `${n.dir}.log`).join(' ')}`);
  if (lastProcessorOutput !== '') {
    const path = join(tmpdir(), `logline-ctp-processor-${process.pid}.log`); // kept, as the broker logs are
    writeFileSync(path, lastProcessorOutput);
    console.log(`# processor log: ${path}`);
  }
});

/** Every partition of the test's and the internal topics has all three replicas in its ISR, as every live broker reports. */
async function allInSync(live: ClusterNodeProcess[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lagging = await Promise.all(live.map(async (n) => {
      const client = new ClusterClient({ bootstrap: `127.0.0.1:${n.brokerPort}`, requestTimeoutMs: 5000 });
      try {
        const topics = await client.metadata(INTERNAL_AND_TEST_TOPICS);
        if (topics.length !== INTERNAL_AND_TEST_TOPICS.length) return [`node ${n.id}: ${topics.length} topics`];
        return topics.flatMap((t) => (t.errorCode !== 0 ? [`${t.name}: error ${t.errorCode}`]
          : t.partitions.filter((p) => p.leader < 0 || p.isr.length !== 3).map((p) => `${t.name}-${p.partition} leader ${p.leader} isr [${p.isr}]`)));
      } catch (err) {
        return [`node ${n.id}: ${err instanceof Error ? err.message : String(err)}`];
      } finally {
        client.close();
      }
    }));
    if (lagging.every((l) => l.length === 0)) return;
    if (Date.now() > deadline) throw new Error(`not every replica back in the ISR after ${timeoutMs} ms: ${[...new Set(lagging.flat())].slice(0, 10).join('; ')}`);
    await sleep(200);
  }
}

/** Appends input records `from`..`from+count-1` spread over the partitions (acks=all; the cluster is healthy). */
async function addInput(client: ClusterClient, from: number, count: number): Promise<void> {
  const per = count / PARTITIONS;
  for (let partition = 0; partition < PARTITIONS; partition++) {
    const start = from + partition * per;
    const records = await buildRecordBatch({ records: Array.from({ length: per }, (_, j) => ({ key: Buffer.from(`k${(start + j) % 100}`), value: Buffer.from(`in-${start + j}`) })) });
    // Refused before the append (leader moved, ISR short) is safe to send again; anything else fails the test.
    for (let attempt = 0; ; attempt++) {
      const code = await client.leaderFor('ctp-in', partition).then(async (conn) => {
        const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: 'ctp-in', partitionData: [{ index: partition, records }] }] });
        return r.responses[0].partitionResponses[0].errorCode as number;
      }, () => ErrorCode.NOT_LEADER_OR_FOLLOWER);
      if (code === ErrorCode.NONE) break;
      assert.ok(([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.LEADER_NOT_AVAILABLE] as number[]).includes(code) && attempt < 100, `input produce: error ${code}`);
      await sleep(100);
    }
  }
}

test(`consume-transform-produce with transactions on 3 brokers (RF 3, min.insync.replicas 2), a broker SIGKILLed and restarted ${KILLS} times: read_committed finds every input record exactly once`,
  { skip: hasConfluent ? false : 'python3-confluent-kafka is not installed', timeout: 240_000 + KILLS * 60_000 }, async (t) => {
    let voters: string;
    ({ nodes, voters } = await clusterNodeProcesses(3, 'll-test-ctp-kill'));
    await Promise.all(nodes.map((n) => startClusterNodeProcess(n, voters, NODE_SETTINGS)));
    const bootstrap = nodes.map((n) => `127.0.0.1:${n.brokerPort}`).join(',');
    const client = new ClusterClient({ bootstrap });
    const stopFile = join(tempDataDir(), 'stop');
    try {
      await within(30_000, 'topics created', (async () => {
        for (;;) {
          const r = await client.admin(ApiKey.CreateTopics, { topics: ['ctp-in', 'ctp-out'].map((name) => ({ name, numPartitions: PARTITIONS, replicationFactor: 3, assignments: [], configs: [] })), timeoutMs: 10_000, validateOnly: false }, 7)
            .catch(() => null);
          const codes = r?.topics.map((x: { errorCode: number }) => x.errorCode) ?? [ErrorCode.NOT_CONTROLLER];
          if (codes.every((c: number) => c === 0 || c === ErrorCode.TOPIC_ALREADY_EXISTS)) return;
          await sleep(100);
        }
      })());
      let inputs = 0;
      await addInput(client, inputs, CHUNK_RECORDS);
      inputs += CHUNK_RECORDS;
      processor = startProcessor(bootstrap, stopFile);
      // The internal topics exist once the processor has found its coordinators.
      await allInSync(nodes, 60_000);

      const prng = new Prng(Number(process.env.LOGLINE_CTP_SEED ?? 1919));
      let restartsOfProcessor = 0;
      const keepProcessorRunning = async () => {
        if (processor && processor.child.exitCode !== null) {
          assert.ok(!existsSync(stopFile));
          t.diagnostic(`processor exited ${processor.child.exitCode}: ${processor.output().split('\n').slice(-15).join(' | ')}`);
          restartsOfProcessor++;
          assert.ok(restartsOfProcessor <= KILLS * 2, `the processor gave up ${restartsOfProcessor} times`);
          processor = startProcessor(bootstrap, stopFile);
        }
      };
      const killed = new Map<number, number>();
      for (let k = 0; k < KILLS; k++) {
        await addInput(client, inputs, CHUNK_RECORDS);
        inputs += CHUNK_RECORDS;
        await sleep(300 + Math.floor(prng.next() * 2000));
        const victim = nodes[Math.floor(prng.next() * nodes.length)]!;
        await killProcess(victim.child!);
        victim.child = null;
        killed.set(victim.id, (killed.get(victim.id) ?? 0) + 1);
        await sleep(500 + Math.floor(prng.next() * 2000));
        await keepProcessorRunning();
        await within(60_000, `restart of node ${victim.id}`, startClusterNodeProcess(victim, voters, NODE_SETTINGS));
        await allInSync(nodes, 90_000);
        await keepProcessorRunning();
      }

      writeFileSync(stopFile, '');
      for (;;) {
        let timer: NodeJS.Timeout | undefined;
        const code = await Promise.race([processor.exited, new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), 180_000); })]);
        clearTimeout(timer);
        if (code === 'timeout') throw new Error(`the processor did not drain the input in 180 s: ${processor.output().slice(-2000)}`);
        if (code === 0) break;
        t.diagnostic(`processor exited ${code} while draining: ${processor.output().split('\n').slice(-15).join(' | ')}`);
        restartsOfProcessor++;
        assert.ok(restartsOfProcessor <= KILLS * 2 + 2, `the processor gave up ${restartsOfProcessor} times`);
        processor = startProcessor(bootstrap, stopFile);
      }
      const aborted = (processor.output().match(/aborting:/g) ?? []).length;
      processor = null;

      await assertExactlyOnceOutput(bootstrap, 'ctp-out', inputs);
      t.diagnostic(`${KILLS} broker kills (${[...killed].map(([id, n]) => `node ${id}: ${n}`).join(', ')}), ${inputs} input records, `
        + `${restartsOfProcessor} processor restarts, ${aborted} aborted transactions in the last incarnation`);
    } finally {
      client.close();
    }
  });
