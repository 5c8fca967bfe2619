// Exactly-once through a crashing processor: a transactional consume-transform-produce loop
// (librdkafka through confluent-kafka-python) reads 100,000 input records and writes one output
// record per input record, committing its input offsets in the same transaction. It is SIGKILLed
// at random moments at least 10 times and started again each time; at the end a read_committed
// consumer must find every input record in the output exactly once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { startServer } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';
import { Prng } from '../../src/util/index.js';
import { killProcess, runProcess, tempDataDir } from './process-helpers.js';
import { assertExactlyOnceOutput, CTP_SCRIPT as SCRIPT, PYTHON } from './ctp-output.js';

const INPUT_RECORDS = 100_000;
const PARTITIONS = 4;
const KILLS_MIN = 10;
/** Small transactions, so the input takes ~2,000 of them and the kills land while work is going on. */
const RECORDS_PER_TXN = 50;

const hasConfluent = spawnSync(PYTHON, ['-c', 'import confluent_kafka']).status === 0;
if (!hasConfluent && process.env.CI) throw new Error('python3-confluent-kafka is missing in CI');

/** Starts one incarnation of the processor; `exited` resolves with its exit code (null when killed). */
function startProcessor(bootstrap: string): { child: ChildProcess; exited: Promise<number | null>; output: () => string } {
  const child = spawn(PYTHON, [SCRIPT, 'run', bootstrap, 'ctp-in', 'ctp-out', 'ctp-group', 'ctp-txn', String(RECORDS_PER_TXN)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => out };
}

test(`consume-transform-produce over ${INPUT_RECORDS} records, the processor SIGKILLed at least ${KILLS_MIN} times: read_committed finds every input record exactly once`,
  { skip: hasConfluent ? false : 'python3-confluent-kafka is not installed', timeout: 300_000 }, async () => {
    const config = parseBrokerConfig({ 'node.id': '1', 'group.initial.rebalance.delay.ms': '0' });
    const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(), config });
    const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
    const client = new ClusterClient({ bootstrap });
    let current: ReturnType<typeof startProcessor> | null = null;
    try {
      const created = await client.admin(ApiKey.CreateTopics, { topics: ['ctp-in', 'ctp-out'].map((name) => ({ name, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] })), timeoutMs: 10_000, validateOnly: false }, 7);
      assert.deepEqual(created.topics.map((t: { errorCode: number }) => t.errorCode), [0, 0]);
      // The input: batches of 1,000 records spread over the partitions.
      for (let start = 0; start < INPUT_RECORDS; start += 1000) {
        const partition = (start / 1000) % PARTITIONS;
        const records = await buildRecordBatch({ records: Array.from({ length: 1000 }, (_, j) => ({ key: Buffer.from(`k${(start + j) % 100}`), value: Buffer.from(`in-${start + j}`) })) });
        const conn = await client.leaderFor('ctp-in', partition);
        const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks: -1, timeoutMs: 10_000, topicData: [{ name: 'ctp-in', partitionData: [{ index: partition, records }] }] });
        assert.equal(r.responses[0].partitionResponses[0].errorCode, 0);
      }

      const prng = new Prng(4242);
      let kills = 0;
      let killsWhileCommitting = 0;
      let drained = false;
      for (let round = 0; round < 40 && !drained; round++) {
        current = startProcessor(bootstrap);
        const proc = current;
        // Most kills come at a random moment after the incarnation committed its first transaction (so
        // in the middle of the work); every fourth at a random moment from its start (fencing, joining).
        let handle: NodeJS.Timeout | undefined;
        const killAt = kills >= KILLS_MIN ? null : new Promise<'kill'>((resolve) => {
          if (round % 4 === 3) { handle = setTimeout(() => resolve('kill'), Math.floor(prng.next() * 2500)); return; }
          const extraMs = Math.floor(prng.next() * 1000);
          const poll = () => { handle = /committed \d+/.test(proc.output()) ? setTimeout(() => resolve('kill'), extraMs) : setTimeout(poll, 20); };
          poll();
        });
        const finalRun = killAt === null ? new Promise<'timeout'>((resolve) => { handle = setTimeout(() => resolve('timeout'), 120_000); }) : null;
        const outcome = await Promise.race([proc.exited, killAt ?? finalRun!]);
        clearTimeout(handle);
        if (outcome === 'timeout') throw new Error(`the processor did not drain the input in 120 s: ${proc.output()}`);
        if (outcome === 'kill') {
          await killProcess(proc.child);
          kills++;
          if (/committed \d+/.test(proc.output())) killsWhileCommitting++;
        } else {
          assert.equal(outcome, 0, `the processor failed: ${proc.output()}`);
          drained = true;
        }
        current = null;
      }
      assert.ok(drained, 'the processor drained the input');

      await assertExactlyOnceOutput(bootstrap, 'ctp-out', INPUT_RECORDS);
      assert.ok(kills >= KILLS_MIN, `the processor was SIGKILLed ${kills} times (at least ${KILLS_MIN} wanted)`);
      assert.ok(killsWhileCommitting >= KILLS_MIN / 2, `only ${killsWhileCommitting} of the ${kills} kills came while it was committing transactions`);
      console.log(`# ${kills} kills, ${killsWhileCommitting} of them while committing transactions`);
    } finally {
      if (current) await killProcess(current.child);
      client.close();
      await server.close();
    }
  });
