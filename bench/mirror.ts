// bench/mirror: MirrorMaker 2 throughput and replication latency between two single-node clusters,
// against the single-node produce rate measured in the same run (issue 35's targets: mirror ≥ 50%
// of produce; at 20 MB/s steady, replication latency p99 ≤ 1 s).
//   npm run bench:mirror                  (one JSON object on stdout, progress on stderr)
//   LOGLINE_BENCH_RECORDS, LOGLINE_BENCH_STEADY_SECONDS, LOGLINE_BENCH_STEADY_MBPS: see two-clusters.ts
//
// Clusters A and B are child `logline server` processes, the mirror a child `logline mirror`
// process (MirrorMaker 2's dedicated mode: its own event loop), the load generator and the reader
// of B this process. "mirror": the records of the produce part copied to B's A.bench.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processCpuSeconds } from './child-broker.js';
import {
  machineNow, measureCopy, measureProduce, measureSteady, PARTITIONS, RECORD_BYTES, round, TOPIC, withTwoClusters,
} from './two-clusters.js';

function startMirror(configFile: string): { pid: number; stop(): Promise<void> } {
  const bin = fileURLToPath(new URL('../../bin/logline.js', import.meta.url));
  const child = spawn(process.execPath, [bin, 'mirror', '--config', configFile, '--status-listener', '127.0.0.1:0', '--offset-flush-interval-ms', '1000', '--log-level', 'WARN'],
    { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

await withTwoClusters('mirror', async (c) => {
  // 1. The single-node produce rate.
  const produced = await measureProduce(c);

  // 2. The mirror copies them.
  const config = join(c.dir, 'mm2.properties');
  writeFileSync(config, [
    'clusters = A, B', `A.bootstrap.servers = ${c.aBootstrap}`, `B.bootstrap.servers = ${c.bBootstrap}`, 'A->B.enabled = true', `A->B.topics = ${TOPIC}`,
    'replication.factor = 1', 'offset-syncs.topic.replication.factor = 1', 'heartbeats.topic.replication.factor = 1',
    'checkpoints.topic.replication.factor = 1', 'offset.storage.replication.factor = 1', 'refresh.topics.interval.seconds = 1',
    'emit.heartbeats.enabled = false', 'emit.checkpoints.enabled = false', 'sync.group.offsets.enabled = false', '',
  ].join('\n'));
  c.say('mirror: starting logline mirror A->B');
  const aCpu0 = processCpuSeconds(c.a.pid) ?? 0;
  const mirror = startMirror(config);
  const remote = `A.${TOPIC}`;
  let mirrorRate: number;
  let mirrorCpu: number | null;
  let steady;
  try {
    mirrorRate = await measureCopy(c, remote, produced.total, 'mirror');
    mirrorCpu = processCpuSeconds(mirror.pid);
    // 3. Replication latency at a steady rate.
    steady = await measureSteady(c, remote);
  } finally {
    await mirror.stop();
  }

  console.log(JSON.stringify({
    bench: 'mirror', machine: machineNow(), recordBytes: RECORD_BYTES, partitions: PARTITIONS, records: produced.total,
    produce: { recordsPerSecond: round(produced.recordsPerSecond, 0), mbPerSecond: round((produced.recordsPerSecond * RECORD_BYTES) / 1048576) },
    mirror: {
      recordsPerSecond: round(mirrorRate, 0), mbPerSecond: round((mirrorRate * RECORD_BYTES) / 1048576),
      cpuSecondsMirrorProcess: mirrorCpu === null ? null : round(mirrorCpu, 2),
      cpuSecondsSourceBroker: round((processCpuSeconds(c.a.pid) ?? aCpu0) - aCpu0, 2),
    },
    mirrorOverProduce: round(mirrorRate / produced.recordsPerSecond, 3),
    steady,
    targets: { mirrorOverProduce: 0.5, steadyP99Ms: 1000 },
  }, null, 2));
});
