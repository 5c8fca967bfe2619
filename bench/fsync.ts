// bench/fsync (issue 33): what power-loss durability costs. acks=all on three `logline server`
// processes on this machine (RF 3, min.insync.replicas 2, 1 KiB records, 12 partitions, one
// `logline bench produce` producer), into a topic with flush.messages=1 (every append fsynced
// before it is acknowledged and counted toward the high watermark; the fsyncs grouped per log
// directory) and into one without, in the same run on the same nodes, alternating which goes
// first. One JSON object on stdout (the median of each and their ratio; target >= 0.5), progress
// on stderr.
//
//   npm run bench:fsync [-- --quick]      LOGLINE_BENCH_FSYNC_RECORDS, LOGLINE_BENCH_FSYNC_REPETITIONS
//
// Bounded by LOGLINE_BENCH_BUDGET_S (default 600 s); kills only the processes it started (by PID).
import { loadavg } from 'node:os';
import { ApiKey, ErrorCode, ZERO_UUID } from '../src/protocol/index.js';
import { bench, BenchRun, createTopic, machine, pick, round, until, type Connections } from './cluster-tools.js';
import type { ServerProcesses } from './server-processes.js';
import { settleDirtyPages } from './settle.js';

const quick = process.argv.includes('--quick');
const RECORDS = Number(process.env['LOGLINE_BENCH_FSYNC_RECORDS'] ?? (quick ? 20_000 : 300_000));
const REPETITIONS = Number(process.env['LOGLINE_BENCH_FSYNC_REPETITIONS'] ?? (quick ? 1 : 3));
const PARTITIONS = 12;
const RECORD_BYTES = 1024;
const TOPICS = { withoutFsync: { name: 'acks-all', configs: {} }, flushMessages1: { name: 'acks-all-fsync', configs: { 'flush.messages': '1' } } } as const;

const benchRun = new BenchRun('fsync', 600);
const say = (m: string): void => benchRun.say(m);

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2; };

async function createTopicWith(procs: ServerProcesses, conns: Connections, name: string, configs: Record<string, string>): Promise<void> {
  const port = procs.live[0]!.brokerPort;
  const all = { 'min.insync.replicas': '2', ...configs };
  await until(`create ${name}`, async () => {
    const r = await conns.send<any>(port, ApiKey.CreateTopics, 7, {
      topics: [{ ...createTopic(name, PARTITIONS, 3), configs: Object.entries(all).map(([n, value]) => ({ name: n, value })) }], timeoutMs: 10_000, validateOnly: false,
    });
    const code = r?.topics?.[0]?.errorCode;
    return code === 0 || code === ErrorCode.TOPIC_ALREADY_EXISTS ? true : undefined;
  }, 50, 30_000);
  // Every partition led, with its full ISR, on every node.
  await until(`${name} fully replicated`, async () => {
    const views = await Promise.all(procs.live.map((n) => conns.send<any>(n.brokerPort, ApiKey.Metadata, 12, { topics: [{ name, topicId: ZERO_UUID }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false })));
    return views.every((v) => v?.topics?.[0]?.errorCode === 0 && v.topics[0].partitions.length === PARTITIONS && v.topics[0].partitions.every((p: any) => p.leaderId >= 0 && p.isrNodes.length === 3)) ? true : undefined;
  }, 50, 120_000);
}

async function main(): Promise<void> {
  const result: Record<string, any> = {
    bench: 'fsync', date: new Date().toISOString(), quick, nodes: 3, replicationFactor: 3, minInsyncReplicas: 2, partitions: PARTITIONS, recordBytes: RECORD_BYTES,
    recordsPerRun: RECORDS, repetitions: REPETITIONS, machine: await machine(),
  };
  const runsOf: Record<keyof typeof TOPICS, Record<string, unknown>[]> = { withoutFsync: [], flushMessages1: [] };
  await benchRun.withNodes(3, {}, async (procs, conns) => {
    for (const t of Object.values(TOPICS)) await createTopicWith(procs, conns, t.name, t.configs);
    for (let rep = 0; rep < REPETITIONS; rep++) {
      // Alternating which goes first, so a drift of the machine's load over the run hits both alike.
      const order = (rep % 2 === 0 ? ['withoutFsync', 'flushMessages1'] : ['flushMessages1', 'withoutFsync']) as (keyof typeof TOPICS)[];
      for (const which of order) {
        await settleDirtyPages(...procs.nodes.map((n) => n.dir));
        const load = loadavg()[0]!;
        say(`${which} (${TOPICS[which].name}), run ${rep + 1} of ${REPETITIONS}: ${RECORDS} records, acks=all`);
        const s = pick(await bench(procs, ['produce', '--topic', TOPICS[which].name, '--record-size', String(RECORD_BYTES), '--acks', '-1', '--num-records', String(RECORDS)]));
        if ('error' in s) throw new Error(`${which}: ${String(s.error)}`);
        runsOf[which].push({ ...s, loadAverage1mAtStart: round(load, 2) });
      }
    }
  });
  const mb = (which: keyof typeof TOPICS) => runsOf[which].map((r) => Number(r.mbPerSec));
  const without = median(mb('withoutFsync'));
  const withFsync = median(mb('flushMessages1'));
  result.acksAll = {
    withoutFsync: { topicConfigs: { 'min.insync.replicas': '2' }, medianMbPerSec: without, runs: runsOf.withoutFsync },
    flushMessages1: { topicConfigs: { 'min.insync.replicas': '2', 'flush.messages': '1' }, medianMbPerSec: withFsync, runs: runsOf.flushMessages1 },
  };
  const ratio = withFsync / without;
  const perRun = mb('flushMessages1').map((w, i) => round(w / mb('withoutFsync')[i]!, 3));
  result.targets = { flushMessages1VsWithout: { target: '>= 0.5', measured: round(ratio, 3), perRepetition: perRun, met: ratio >= 0.5 } };
  result.loadAverageAfter = loadavg().map((l) => round(l, 2));
  console.log(JSON.stringify({ ...result, node: process.version, benchSeconds: benchRun.seconds() }, null, 2));
}

benchRun.run(main);
