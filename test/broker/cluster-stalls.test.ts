// Issue 33's stalled brokers: three combined broker+controller `logline server` processes, the kill
// run's RF 3 / min.insync.replicas 2 topic and its two idempotent acks=all producers. Each round
// freezes one node with SIGSTOP (in turn: the active controller's node, a partition leader, a
// follower) for longer than its broker session, so that the controller fences it and its leaderships
// move while it cannot know. While it is frozen the test writes a Produce at acks=1 and one at
// acks=all for every partition to it over connections opened before the freeze (a client whose
// metadata still names it leader), then SIGCONTs it: the first thing it reads is those requests,
// before any metadata. Each must be refused (NOT_LEADER_OR_FOLLOWER or a fenced epoch, never a
// success that a truncation then loses). A stale ISR change of the woken node is refused by epoch,
// it rejoins every ISR, and at the end every acknowledged record of the producers is where it was
// acknowledged, and no refused record is in the topic. LOGLINE_STALL_ROUNDS rounds (3 by default).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerConnection, ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { buildRecordBatch } from '../../src/records/index.js';
import { Prng } from '../../src/util/index.js';
import { consumeAll } from './log-reader.js';
import { clusterNodeProcesses, within, type ClusterNodeProcess } from './process-helpers.js';
import {
  bootstrapOf, controllerOf, guardFaultRun, FAULT_NODE_SETTINGS, librdkafkaSkip, partitionsOn, sleep,
  untilAcked, untilFullIsr, untilMoved, finishFaultRun, startFaultRun, type FaultProducer,
} from './replication-faults.js';

const ROUNDS = Number(process.env['LOGLINE_STALL_ROUNDS'] ?? 3);
const SEED = Number(process.env['LOGLINE_STALL_SEED'] ?? Date.now() % 1_000_000);
const TOPIC = 'stalls';
const PARTITIONS = 3;
const SESSION_MS = 3000; // broker.session.timeout.ms of FAULT_NODE_SETTINGS

/** What a frozen node answered to one stale Produce, per partition: the error code (0 = acknowledged) and base offset. */
type StaleAnswer = { partition: number; errorCode: number; baseOffset: bigint }[];

test(`RF 3, min.insync.replicas 2: ${ROUNDS} SIGSTOPs longer than the broker session (the controller's node, a leader, a follower); the woken node refuses writes it no longer leads and rejoins; no acknowledged record lost`,
  { timeout: 150_000 + ROUNDS * 60_000 }, async (t) => {
    const skip = await librdkafkaSkip();
    if (skip) { t.skip(skip); return; }
    t.diagnostic(`seed ${SEED} (LOGLINE_STALL_SEED=${SEED} replays the same choices)`);
    const prng = new Prng(SEED);
    const { nodes, voters } = await clusterNodeProcesses(3, 'll-test-replication-stalls');
    const producers: FaultProducer[] = [];
    const stopped = new Set<ClusterNodeProcess>();
    const conns: BrokerConnection[] = [];
    await guardFaultRun(t, nodes, TOPIC, producers, async () => {
      const run = await startFaultRun(nodes, voters, TOPIC, PARTITIONS, producers);
      let partitions = run.partitions;
      const { py, js, untilBothAcked } = run;

      const staleValues: string[] = [];
      let staleIsrRefusals = 0;
      for (let round = 1; round <= ROUNDS; round++) {
        // The controller's node first, while every node leads a partition (a woken controller is
        // the sharpest case: its metadata comes from its own log, which has stopped moving).
        const kind = (['controller', 'leader', 'follower'] as const)[(round - 1) % 3]!;
        const controllerId = await controllerOf(nodes);
        const leads = (id: number) => partitions.filter((p) => p.leader === id).length;
        const others = nodes.filter((n) => n.id !== controllerId);
        const victim = kind === 'controller' ? nodes.find((n) => n.id === controllerId)!
          // A leader: a node (not the controller's, where possible) leading a partition; a follower:
          // the node leading the fewest partitions among those that are not the controller's.
          : kind === 'leader' ? (others.filter((n) => leads(n.id) > 0)[prng.int(Math.max(1, others.filter((n) => leads(n.id) > 0).length))] ?? nodes.find((n) => leads(n.id) > 0)!)
            : [...others].sort((a, b) => leads(a.id) - leads(b.id))[0]!;
        const led = partitions.filter((p) => p.leader === victim.id);
        // Connections a client opened while the victim led: they carry the stale writes.
        const acks1 = await BrokerConnection.open({ host: '127.0.0.1', port: victim.brokerPort, requestTimeoutMs: 60_000 });
        const acksAll = await BrokerConnection.open({ host: '127.0.0.1', port: victim.brokerPort, requestTimeoutMs: 60_000 });
        conns.push(acks1, acksAll);
        // Served once each, so both are accepted and being read when the node freezes.
        for (const c of [acks1, acksAll]) await c.send(ApiKey.Metadata, 12, { topics: [{ name: TOPIC, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });

        const stoppedAt = Date.now();
        victim.child!.kill('SIGSTOP');
        stopped.add(victim);
        const survivors = nodes.filter((n) => n !== victim);
        // The controller fences it once its session runs out and moves its leaderships; the ISRs shrink without it.
        await untilMoved(survivors, TOPIC, victim, led.map((p) => p.partition), `round ${round}: leaderships of frozen node ${victim.id} moved`);
        await within(60_000, `round ${round}: node ${victim.id} out of every ISR`, (async () => {
          for (;;) {
            const views = await Promise.all(survivors.map((n) => partitionsOn(n, TOPIC)));
            if (views.every((ps) => ps !== null && ps.every((p) => p.leader >= 0 && !p.isr.includes(victim.id)))) return;
            await sleep(200);
          }
        })());
        const movedMs = Date.now() - stoppedAt;
        // librdkafka goes on meanwhile. kafkajs is not asked to: it keeps the frozen node's open
        // connection in its pool and sends metadata requests there, each waiting out its request
        // timeout (seen: nothing acknowledged to it for over a minute while a node was frozen).
        await untilAcked(nodes, TOPIC, { librdkafka: py }, `round ${round}: librdkafka acknowledged while node ${victim.id} is frozen`);
        // Frozen for at least twice its session in all.
        await sleep(Math.max(0, 2 * SESSION_MS - (Date.now() - stoppedAt)));

        // The stale client writes, queued in the frozen node's socket: the first thing it reads.
        const stale = async (conn: BrokerConnection, acks: number): Promise<StaleAnswer> => {
          const partitionData = await Promise.all(Array.from({ length: PARTITIONS }, async (_, index) => {
            const value = `stale-r${round}-acks${acks}-p${index}`;
            staleValues.push(value);
            return { index, records: await buildRecordBatch({ records: [{ value: Buffer.from(value) }] }) };
          }));
          const r = await conn.send(ApiKey.Produce, 9, { transactionalId: null, acks, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData }] });
          return (r.responses[0].partitionResponses as { index: number; errorCode: number; baseOffset: bigint }[])
            .map((p) => ({ partition: p.index, errorCode: p.errorCode, baseOffset: p.baseOffset }));
        };
        const answers = [stale(acks1, 1), stale(acksAll, -1)];
        await sleep(200); // the requests are in the frozen node's receive buffer
        const marks = nodes.map((n) => n.log.length);
        const resumedAt = Date.now();
        victim.child!.kill('SIGCONT');
        stopped.delete(victim);
        const [one, all] = await within(60_000, `round ${round}: node ${victim.id} answering the stale writes`, Promise.all(answers));
        const describe = (a: StaleAnswer) => a.map((p) => `p${p.partition} ${p.errorCode === 0 ? `ACKNOWLEDGED at ${p.baseOffset}` : `error ${p.errorCode}`}`).join(', ');
        t.diagnostic(`round ${round} (${kind}): node ${victim.id} (led [${led.map((p) => p.partition)}]) frozen ${resumedAt - stoppedAt} ms, leaderships moved and ISRs shrunk after ${movedMs} ms; `
          + `woken, it answered acks=1: ${describe(one!)}; acks=all: ${describe(all!)}`);
        const refused: number[] = [ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.REQUEST_TIMED_OUT];
        for (const [acks, answer] of [[1, one!], [-1, all!]] as const) {
          for (const p of answer) {
            assert.ok(refused.includes(p.errorCode), `round ${round}: woken node ${victim.id} answered a stale acks=${acks} write to partition ${p.partition} with ${p.errorCode === 0 ? `success at offset ${p.baseOffset}` : `error ${p.errorCode}`}, not a refusal`);
          }
        }
        acks1.close();
        acksAll.close();

        // It rejoins: every ISR full again, and the producers go on.
        partitions = await untilFullIsr(nodes, TOPIC, 60_000, `round ${round}: after waking node ${victim.id}`);
        const fullMs = Date.now() - resumedAt;
        // Its ISR changes from before it learned of its fencing carry its old epochs: the active
        // controller refuses them (Kafka's validateAlterPartitionData), none is applied.
        const isrChanges = nodes.flatMap((n, i) => [...n.log.slice(marks[i]).matchAll(new RegExp(`AlterPartition from broker ${victim.id} for (${TOPIC}-\\d+) refused: error (\\d+)`, 'g'))].map((m) => `${m[1]} ${m[2]}`));
        const byEpoch = [String(ErrorCode.FENCED_LEADER_EPOCH), String(ErrorCode.INVALID_UPDATE_VERSION), String(ErrorCode.NEW_LEADER_ELECTED)];
        for (const c of isrChanges) assert.ok(byEpoch.includes(c.split(' ')[1]!), `round ${round}: the woken node's ISR change ${c} was refused, but not for its epoch`);
        if (led.length > 0) staleIsrRefusals += isrChanges.length;
        t.diagnostic(`round ${round}: the controller refused ${isrChanges.length} ISR change(s) of the woken node by epoch${isrChanges.length > 0 ? ` (${isrChanges.join(', ')})` : ''}`);
        await untilBothAcked(`round ${round}: both producers acknowledged after waking node ${victim.id}`);
        t.diagnostic(`round ${round}: ISRs full ${fullMs} ms after the wake-up; leaders now [${partitions.map((p) => `${p.partition}:${p.leader}@${p.leaderEpoch}`)}]`);
        await sleep(500 + prng.int(1500));
      }

      // No refused write made it into the topic (a stale leader's append is truncated, not replicated).
      const client = new ClusterClient({ bootstrap: bootstrapOf(nodes), requestTimeoutMs: 10_000 });
      try {
        for (let p = 0; p < PARTITIONS; p++) {
          const values = await consumeAll(client, TOPIC, p);
          const found = values.map((v, o) => [v, o] as const).filter(([v]) => v.startsWith('stale-'));
          assert.deepEqual(found, [], `partition ${p} holds refused stale writes`);
        }
      } finally {
        client.close();
      }
      await finishFaultRun(t, nodes, TOPIC, PARTITIONS, { librdkafka: py, kafkajs: js }, producers);
    }, {
      beforeKill: () => {
        for (const c of conns) c.close();
        for (const n of stopped) n.child?.kill('SIGCONT');
      },
    });
  });
