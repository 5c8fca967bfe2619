// Issue 19's kill run: three combined broker+controller `logline server` processes, a topic with
// RF 3 and min.insync.replicas 2, an idempotent acks=all librdkafka producer and an idempotent
// kafkajs producer at a steady rate, while the test SIGKILLs a random node every few seconds and
// restarts it (LOGLINE_REPLICATION_KILLS times: 3 in `npm test`, 20+ by hand; the choice of victim
// and the pauses come from LOGLINE_REPLICATION_SEED, printed). After each restart every ISR must be
// full again and both producers must be acknowledged again. At the end every acknowledged record is
// at the offset it was acknowledged with, no value is in the topic twice, and a consumer group
// reads every record; stopped, every node's own files hold the same records at the same offsets.
import { test } from 'node:test';
import { Prng } from '../../src/util/index.js';
import { clusterNodeProcesses, killProcess, startClusterNodeProcess, within } from './process-helpers.js';
import {
  FAULT_NODE_SETTINGS, guardFaultRun, librdkafkaSkip, sleep, startFaultRun, untilFullIsr, finishFaultRun, type FaultProducer,
} from './replication-faults.js';

const KILLS = Number(process.env['LOGLINE_REPLICATION_KILLS'] ?? 3);
const SEED = Number(process.env['LOGLINE_REPLICATION_SEED'] ?? Date.now() % 1_000_000);
const TOPIC = 'kills';
const PARTITIONS = 3;

test(`RF 3, min.insync.replicas 2: ${KILLS} SIGKILLs of random nodes under librdkafka and kafkajs acks=all idempotent producers lose no acknowledged record and duplicate none`,
  { timeout: 120_000 + KILLS * 60_000 }, async (t) => {
    const skip = await librdkafkaSkip();
    if (skip) { t.skip(skip); return; }
    t.diagnostic(`seed ${SEED} (LOGLINE_REPLICATION_SEED=${SEED} replays the same victims and pauses)`);
    const prng = new Prng(SEED);
    const { nodes, voters } = await clusterNodeProcesses(3, 'll-test-replication-kills');
    const producers: FaultProducer[] = [];
    await guardFaultRun(t, nodes, TOPIC, producers, async () => {
      const { py, js, untilBothAcked } = await startFaultRun(nodes, voters, TOPIC, PARTITIONS, producers);

      const victims: number[] = [];
      for (let kill = 1; kill <= KILLS; kill++) {
        const victim = nodes[prng.int(nodes.length)]!;
        victims.push(victim.id);
        const killedAt = Date.now();
        await killProcess(victim.child!);
        victim.child = null;
        // Down for up to twice the session timeout: some restarts beat the fencing, others come
        // after the controller moved its leaderships and shrank its ISRs.
        await sleep(500 + prng.int(5500));
        const restartAt = Date.now();
        await within(45_000, `restart of node ${victim.id}`, startClusterNodeProcess(victim, voters, FAULT_NODE_SETTINGS));
        const upMs = Date.now() - restartAt;
        await untilFullIsr(nodes, TOPIC, 60_000, `after kill ${kill} (node ${victim.id})`);
        const fullMs = Date.now() - restartAt;
        await untilBothAcked(`both producers acknowledged after kill ${kill} (node ${victim.id})`);
        t.diagnostic(`kill ${kill}: node ${victim.id} down ${restartAt - killedAt} ms, listening ${upMs} ms after the restart, ISRs full ${fullMs} ms after it`);
        await sleep(1000 + prng.int(2000));
      }
      t.diagnostic(`killed nodes ${victims.join(', ')}`);

      await finishFaultRun(t, nodes, TOPIC, PARTITIONS, { librdkafka: py, kafkajs: js }, producers);
    });
  });
