// A cluster link across network cuts: a three-node source A and a three-node target B, each in its
// own network namespace (the test process, the producers and the CLI stay in the root namespace and
// reach both). `orders` on A (3 partitions, RF 3, min.insync.replicas 2) takes librdkafka and
// kafkajs acks=all idempotent writes throughout; B has a link `dr` to A and mirrors `orders` with
// RF 3. Per round: the network between the clusters is cut; while cut, a source partition's leader
// is SIGKILLed (A elects another and keeps taking writes) and B must keep serving what it has,
// unchanged; the cut heals and B's fetchers must catch up by themselves (checked against the
// source's new leader, no restart of B); the A node comes back. A target partition's leader is
// SIGKILLed too, by the seed either while cut (its new leader's fetcher starts with the source
// out of reach) or after the heal, and restarted after B caught up. At the end every acknowledged record is on B at its offset, B's
// partitions equal A's (offsets, timestamps, keys, values, headers: nothing extra), each B replica's
// own files hold the same, and `logline link status` shows lag 0. LOGLINE_LINK_CUT_ROUNDS rounds
// (1 in `npm test`), LOGLINE_LINK_CUT_SEED replays the random choices. Needs root and `ip netns`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Prng } from '../../src/util/index.js';
import { killProcess, startClusterNodeProcess, within, type ClusterNodeProcess } from '../broker/process-helpers.js';
import { NetnsLab, netnsSkip } from '../broker/netns-lab.js';
import {
  bootstrapOf, FAULT_NODE_SETTINGS, guardFaultRun, librdkafkaSkip, liveLeaderOf, sleep, startFaultRun, untilFullIsr, verifyReplicaFiles, type FaultProducer,
} from '../broker/replication-faults.js';
import { eventually, readAll } from '../mirror/helpers.js';
import { cli, ends, view } from './helpers.js';

const ROUNDS = Number(process.env.LOGLINE_LINK_CUT_ROUNDS ?? 1);
const SEED = Number(process.env.LOGLINE_LINK_CUT_SEED ?? Date.now() % 1_000_000);
const TOPIC = 'orders';
const PARTITIONS = 3;
// Its own devices and /24 (other namespace tests: lk19 / 10.219.19, lk35 / 10.219.35).
const lab = new NetnsLab('lc35', '10.219.135');
const [HOST_A, HOST_B] = [1, 2];

const live = (nodes: ClusterNodeProcess[]) => bootstrapOf(nodes.filter((n) => n.child !== null));

test(`a cluster link between two 3-node clusters in their own namespaces: ${ROUNDS} round(s) of a cut between the clusters with a source leader SIGKILLed while cut and a target leader while cut or after the heal, under librdkafka and kafkajs acks=all producers; B serves during the cut, its fetchers recover alone, and it ends with exactly A's records at A's offsets`,
  { timeout: 240_000 + ROUNDS * 120_000 }, async (t) => {
    const skip = (await netnsSkip()) || (await librdkafkaSkip());
    if (skip) { t.skip(skip); return; }
    t.diagnostic(`seed ${SEED} (LOGLINE_LINK_CUT_SEED=${SEED} replays the same choices)`);
    const prng = new Prng(SEED);
    const a = await lab.clusterOn(HOST_A, 'll-test-linkcut-a');
    const b = await lab.clusterOn(HOST_B, 'll-test-linkcut-b');
    const producers: FaultProducer[] = [];
    const ids = [HOST_A, HOST_B];
    const started = Date.now();
    const restart = async (n: ClusterNodeProcess, voters: string, what: string) =>
      within(45_000, `restart of ${what}`, startClusterNodeProcess(n, voters, FAULT_NODE_SETTINGS));
    const endsOf = async (nodes: ClusterNodeProcess[]) => ends(live(nodes), TOPIC, PARTITIONS).catch(() => null);
    await lab.down(ids);
    await guardFaultRun(t, [...a.nodes, ...b.nodes], TOPIC, producers, async () => {
      await lab.up(ids);
      await Promise.all(b.nodes.map((n) => startClusterNodeProcess(n, b.voters, FAULT_NODE_SETTINGS)));
      const { py, js, untilBothAcked } = await startFaultRun(a.nodes, a.voters, TOPIC, PARTITIONS, producers);
      // The link's bootstrap is A's namespace addresses: B's nodes reach them only across the bridge.
      await cli(['link', 'create', 'dr', '--source', bootstrapOf(a.nodes), '-b', bootstrapOf(b.nodes)]);
      await cli(['link', 'mirror', 'dr', TOPIC, '--replication-factor', '3', '-b', bootstrapOf(b.nodes)]);
      await eventually('B to mirror records of every partition', 60_000, async () => (await endsOf(b.nodes))?.every((e) => e > 0) ?? false);
      await untilFullIsr(b.nodes, TOPIC, 60_000, 'the mirror topic on B');

      for (let round = 1; round <= ROUNDS; round++) {
        await lab.cut(HOST_A, [HOST_B]);
        // What the fetchers had in flight lands; then nothing crosses the cut.
        await sleep(2000);
        const atCut = await endsOf(b.nodes);
        assert.ok(atCut !== null, `round ${round}: B answers ListOffsets during the cut`);
        const victim = await liveLeaderOf(a.nodes, TOPIC, prng.int(PARTITIONS));
        await killProcess(victim.child!);
        victim.child = null;
        await untilBothAcked(`round ${round}: A takes writes while cut off from B with node ${victim.id} down`);
        // Half the rounds (by the seed) also lose a target leader while cut: its partition's new
        // leader on B starts a fetcher that cannot reach the source until the heal.
        const targetWhileCut = prng.int(2) === 0;
        const targetLeader = await liveLeaderOf(b.nodes, TOPIC, prng.int(PARTITIONS));
        if (targetWhileCut) {
          await killProcess(targetLeader.child!);
          targetLeader.child = null;
          // The new leader's high watermark reaches what the old one had once the other replica fetches.
          await eventually(`round ${round}: B to serve up to ${atCut.join()} again after node ${targetLeader.id} was SIGKILLed while cut`, 60_000,
            async () => (await endsOf(b.nodes))?.join() === atCut.join());
        }
        await sleep(1000 + prng.int(3000));
        // B serves reads of what it has: the same records as at the cut, from offset 0, none added.
        const during = await readAll(live(b.nodes), TOPIC, PARTITIONS);
        for (let p = 0; p < PARTITIONS; p++) {
          const records = during.get(p)!;
          assert.equal(records.length, atCut[p], `round ${round}: B serves ${TOPIC}-${p} up to ${atCut[p]} during the cut (got ${records.length})`);
          assert.ok(records.every((r, i) => r.offset === i), `round ${round}: B's ${TOPIC}-${p} is contiguous from 0 during the cut`);
        }
        assert.deepEqual(await endsOf(b.nodes), atCut, `round ${round}: nothing reaches B across the cut`);
        const sourceAtHeal = await endsOf(a.nodes);
        assert.ok(sourceAtHeal !== null && sourceAtHeal.some((e, p) => e > atCut[p]!), `round ${round}: A took writes B has not seen (A ${sourceAtHeal?.join()}, B ${atCut.join()})`);
        await lab.heal(ids);
        const healed = Date.now();
        // B's fetchers find A's new leader and catch up by themselves; the A node comes back meanwhile.
        const back = restart(victim, a.voters, `A's node ${victim.id} (a source leader)`);
        back.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
        await eventually(`round ${round}: B's fetchers to catch up past A's ends at the heal (${sourceAtHeal.join()}) without a restart of B`, 90_000,
          async () => (await endsOf(b.nodes))?.every((e, p) => e >= sourceAtHeal[p]!) ?? false);
        const caughtUpMs = Date.now() - healed;
        await back;
        await untilFullIsr(a.nodes, TOPIC, 60_000, `round ${round}: A after node ${victim.id} came back`);
        t.diagnostic(`round ${round}: cut with B at ${atCut.join()}, A's node ${victim.id}${targetWhileCut ? ` and B's node ${targetLeader.id}` : ''} SIGKILLed while cut; healed with A at ${sourceAtHeal.join()}, B caught up in ${caughtUpMs} ms`);

        if (!targetWhileCut) {
          await killProcess(targetLeader.child!);
          targetLeader.child = null;
          await sleep(500 + prng.int(2000));
        }
        await restart(targetLeader, b.voters, `B's node ${targetLeader.id} (a target leader)`);
        await untilFullIsr(b.nodes, TOPIC, 60_000, `round ${round}: B after node ${targetLeader.id} came back`);
        await untilBothAcked(`round ${round}: both producers acknowledged after the kills`);
        t.diagnostic(`round ${round}: B's node ${targetLeader.id} (a target leader) ${targetWhileCut ? 'restarted' : 'SIGKILLed after the heal and restarted'}`);
      }

      const results = { librdkafka: await py.stop(), kafkajs: await js.stop() };
      producers.length = 0;
      assert.deepEqual(results.librdkafka.failures.slice(0, 10), [], 'librdkafka delivered every record');
      const sourceEnds = await ends(bootstrapOf(a.nodes), TOPIC, PARTITIONS);
      await eventually(`B to reach A's ends ${sourceEnds.join()}`, 90_000, async () => (await endsOf(b.nodes))?.join() === sourceEnds.join());
      const [onA, onB] = await Promise.all([readAll(bootstrapOf(a.nodes), TOPIC, PARTITIONS), readAll(bootstrapOf(b.nodes), TOPIC, PARTITIONS)]);
      for (let p = 0; p < PARTITIONS; p++) assert.deepEqual(view(onB.get(p)!), view(onA.get(p)!), `${TOPIC}-${p}: B holds A's records at A's offsets (timestamps, keys, values, headers), nothing extra`);
      for (const [name, r] of Object.entries(results)) {
        for (const ack of r.acks) {
          const records = onB.get(ack.p)!;
          if (ack.o === null) assert.ok(records.some((x) => x.value?.toString() === ack.v), `${name}: ${ack.v} (acknowledged without an offset) is in B's ${TOPIC}-${ack.p}`);
          else assert.equal(records[ack.o]?.value?.toString(), ack.v, `${name}: ${ack.v} acknowledged at ${TOPIC}-${ack.p}@${ack.o} is there on B`);
        }
      }
      const status = JSON.parse(await cli(['link', 'status', '--json', '-b', bootstrapOf(b.nodes)])) as { topic: string; partition: number; lag: number | null }[];
      assert.deepEqual(status.map((s) => [s.topic, s.partition, s.lag]).sort(), [0, 1, 2].map((p) => [TOPIC, p, 0]), 'logline link status: lag 0 on every partition');
      await untilFullIsr(b.nodes, TOPIC, 60_000, 'B at the end');
      // Each of B's replicas holds on disk exactly what B served.
      for (const n of b.nodes) { await killProcess(n.child!); n.child = null; }
      await verifyReplicaFiles(b.nodes, TOPIC, [0, 1, 2].map((p) => onB.get(p)!.map((r) => r.value!.toString())));
      const total = [...onA.values()].reduce((s, r) => s + r.length, 0);
      t.diagnostic(`${total} records (${sourceEnds.join(', ')}) on A and on B at the same offsets, ${results.librdkafka.acks.length} librdkafka and ${results.kafkajs.acks.length} kafkajs acknowledgements, every B replica the same; ${Math.round((Date.now() - started) / 1000)} s`);
    }, { after: () => lab.down(ids) });
  });
