// MirrorMaker 2 between two 3-node clusters, each in its own network namespace (A's three nodes on
// one host, B's three and `logline mirror` on another; the test process and the producers stay in
// the root namespace and reach both). A topic with RF 3 and min.insync.replicas 2 on A takes
// librdkafka and kafkajs acks=all idempotent writes throughout while, per round: the link between
// the clusters is cut and healed, the leader of a source partition on A is SIGKILLed and restarted,
// the leader of its mirror partition on B likewise, and the mirror process too. Afterwards every
// record A acknowledged is on B, in A's per-partition order (at least once: a record may be there
// twice; with exactly.once.support=enabled, once). LOGLINE_MIRROR_CUT_ROUNDS rounds (1 in `npm test`).
// Needs root and `ip netns`.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Prng } from '../../src/util/index.js';
import { killProcess, startClusterNodeProcess, within, type ClusterNodeProcess } from '../broker/process-helpers.js';
import { NetnsLab, netnsSkip } from '../broker/netns-lab.js';
import {
  bootstrapOf, FAULT_NODE_SETTINGS, guardFaultRun, librdkafkaSkip, liveLeaderOf, sleep, startFaultRun, untilFullIsr, type FaultProducer,
} from '../broker/replication-faults.js';
import { eventually, readAll } from './helpers.js';

const ROUNDS = Number(process.env.LOGLINE_MIRROR_CUT_ROUNDS ?? 1);
const SEED = Number(process.env.LOGLINE_MIRROR_CUT_SEED ?? Date.now() % 1_000_000);
const TOPIC = 'orders';
const MIRRORED = `A.${TOPIC}`;
const PARTITIONS = 3;
const lab = new NetnsLab('lk35', '10.219.35');
const [HOST_A, HOST_B] = [1, 2];

for (const exactlyOnce of [false, true]) {
  test(`MirrorMaker 2 ${exactlyOnce ? 'exactly once' : 'at least once'} between two 3-node clusters in their own namespaces: ${ROUNDS} round(s) of a cut between the clusters and SIGKILLs of a source leader, a target leader and the mirror process under librdkafka and kafkajs acks=all producers; every record A acknowledged is on B in A's order${exactlyOnce ? ', once' : ''}`,
  { timeout: 240_000 + ROUNDS * 150_000 }, (t) => mirrorRun(t, exactlyOnce));
}

async function mirrorRun(t: TestContext, exactlyOnce: boolean): Promise<void> {
  const skip = (await netnsSkip()) || (await librdkafkaSkip());
  if (skip) { t.skip(skip); return; }
  t.diagnostic(`seed ${SEED} (LOGLINE_MIRROR_CUT_SEED=${SEED} replays the same choices)`);
  const prng = new Prng(SEED);
  const a = await lab.clusterOn(HOST_A, 'll-test-mirror-a');
  const b = await lab.clusterOn(HOST_B, 'll-test-mirror-b');
  const file = join(mkdtempSync(join(tmpdir(), 'logline-mm2-')), 'mm2.properties');
  writeFileSync(file, [
    'clusters = A, B', `A.bootstrap.servers = ${bootstrapOf(a.nodes)}`, `B.bootstrap.servers = ${bootstrapOf(b.nodes)}`,
    'A->B.enabled = true', `A->B.topics = ${TOPIC}`, 'replication.factor = 3', 'refresh.topics.interval.seconds = 1',
    `exactly.once.support = ${exactlyOnce ? 'enabled' : 'disabled'}`, '',
  ].join('\n'));
  let mirror: ChildProcess | null = null;
  let mirrorLog = '';
  let passed = false;
  // In B's namespace, beside the target as MirrorMaker 2 is usually deployed: a cut between the
  // clusters cuts the mirror from its source. `ip netns exec` execs in place: the pid is the mirror's.
  const startMirror = () => {
    mirror = spawn('ip', ['netns', 'exec', lab.nsOf(HOST_B), process.execPath, 'bin/logline.js', 'mirror', '--config', file,
      '--status-listener', '127.0.0.1:0', '--offset-flush-interval-ms', '500', '--log-level', 'WARN'], { stdio: ['ignore', 'ignore', 'pipe'] });
    mirror.stderr!.on('data', (d: Buffer) => { mirrorLog = (mirrorLog + d).slice(-20_000); });
  };
  const killMirror = async () => { if (mirror !== null) await killProcess(mirror); mirror = null; };
  const restart = async (n: ClusterNodeProcess, voters: string, nodes: ClusterNodeProcess[], topic: string, what: string) => {
    await killProcess(n.child!);
    n.child = null;
    await sleep(500 + prng.int(2500));
    await within(45_000, `restart of ${what}`, startClusterNodeProcess(n, voters, FAULT_NODE_SETTINGS));
    await untilFullIsr(nodes, topic, 60_000, `after the kill of ${what}`);
  };
  const onB = async () => readAll(bootstrapOf(b.nodes), MIRRORED, PARTITIONS).catch(() => null);
  const producers: FaultProducer[] = [];
  const ids = [HOST_A, HOST_B];
  await lab.down(ids);
  await guardFaultRun(t, [...a.nodes, ...b.nodes], TOPIC, producers, async () => {
    await lab.up(ids);
    await Promise.all(b.nodes.map((n) => startClusterNodeProcess(n, b.voters, FAULT_NODE_SETTINGS)));
    const { py, js, untilBothAcked } = await startFaultRun(a.nodes, a.voters, TOPIC, PARTITIONS, producers);
    startMirror();
    await eventually('the mirror to start copying', 60_000, async () => ((await onB())?.get(0)?.length ?? 0) > 0);
    await untilFullIsr(b.nodes, MIRRORED, 60_000, 'the mirrored topic on B');

    for (let round = 1; round <= ROUNDS; round++) {
      const mirrored = async () => [...((await onB())?.values() ?? [])].reduce((s, r) => s + r.length, 0);
      await lab.cut(HOST_A, [HOST_B]);
      // What the mirror had fetched before the cut lands on B; then nothing crosses it.
      await sleep(2000);
      const mirroredAtCut = await mirrored();
      await sleep(2000 + prng.int(4000));
      await untilBothAcked(`round ${round}: A takes writes while cut off from B`);
      assert.equal(await mirrored(), mirroredAtCut, 'nothing reaches B across the cut');
      await lab.heal(ids);
      t.diagnostic(`round ${round}: cut between the clusters healed (B held ${mirroredAtCut} records during it)`);

      const sourceLeader = await liveLeaderOf(a.nodes, TOPIC, prng.int(PARTITIONS));
      await restart(sourceLeader, a.voters, a.nodes, TOPIC, `A's node ${sourceLeader.id} (a source leader)`);
      await untilBothAcked(`round ${round}: both producers acknowledged after the kill on A`);

      const targetLeader = await liveLeaderOf(b.nodes, MIRRORED, prng.int(PARTITIONS));
      await restart(targetLeader, b.voters, b.nodes, MIRRORED, `B's node ${targetLeader.id} (a target leader)`);

      await killMirror();
      await sleep(300 + prng.int(1000));
      startMirror();
      await untilBothAcked(`round ${round}: both producers acknowledged after the kills`);
      t.diagnostic(`round ${round}: killed A's node ${sourceLeader.id}, B's node ${targetLeader.id} and the mirror`);
    }

    const results = { librdkafka: await py.stop(), kafkajs: await js.stop() };
    producers.length = 0;
    assert.deepEqual(results.librdkafka.failures.slice(0, 10), [], 'librdkafka delivered every record');
    const source = await readAll(bootstrapOf(a.nodes), TOPIC, PARTITIONS);
    for (const [name, r] of Object.entries(results)) {
      for (const ack of r.acks) {
        if (ack.o === null) continue;
        assert.equal(source.get(ack.p)!.find((x) => x.offset === ack.o)?.value?.toString(), ack.v, `${name}: ${ack.v} acknowledged at ${TOPIC}-${ack.p}@${ack.o} is there on A`);
      }
    }
    const sourceValues = [...source.entries()].map(([p, records]) => [p, records.map((x) => x.value!.toString())] as const);
    let target = new Map<number, string[]>();
    await eventually('B to hold every record of A', 120_000, async () => {
      const t = await onB();
      if (t === null) return false;
      target = new Map([...t.entries()].map(([p, records]) => [p, records.map((x) => x.value!.toString())]));
      return sourceValues.every(([p, values]) => { const onTarget = new Set(target.get(p)); return values.every((v) => onTarget.has(v)); });
    });
    let duplicates = 0;
    for (const [p, values] of sourceValues) {
      const copies = target.get(p)!;
      duplicates += copies.length - new Set(copies).size;
      // The first copy of each record comes in A's order.
      const seen = new Set<string>();
      assert.deepEqual(copies.filter((v) => !seen.has(v) && seen.add(v)), values, `${MIRRORED}-${p} holds A's records in A's order`);
    }
    const total = sourceValues.reduce((s, [, v]) => s + v.length, 0);
    if (exactlyOnce) assert.equal(duplicates, 0, 'exactly once: no record on B twice');
    passed = true;
    t.diagnostic(`${total} records on A (${results.librdkafka.acks.length} librdkafka and ${results.kafkajs.acks.length} kafkajs acknowledgements), all on B in order, ${duplicates} duplicates`);
  }, {
    beforeKill: () => { if (mirror !== null) mirror.kill('SIGKILL'); },
    after: async () => {
      if (!passed && mirrorLog !== '') t.diagnostic(`mirror log (tail): ${mirrorLog.slice(-3000)}`);
      await lab.down(ids);
    },
  });
}
