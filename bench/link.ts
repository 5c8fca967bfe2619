// bench/link: mirror topics that keep offsets (a cluster link, issue 35 part 2) between two
// single-node clusters: the link's catch-up rate against the single-node produce rate measured in
// the same run, and replication latency at a steady rate (issue 35's target for mirror topics: at
// 20 MB/s steady, p99 <= 200 ms).
//   npm run bench:link                    (one JSON object on stdout, progress on stderr)
//   LOGLINE_BENCH_RECORDS, LOGLINE_BENCH_STEADY_SECONDS, LOGLINE_BENCH_STEADY_MBPS: see two-clusters.ts
//
// Clusters A (source) and B (target) are child `logline server` processes; B's partition leaders
// fetch from A (the link fetchers run inside B). The link is created and `bench` mirrored only
// after the produce part, so "link" is B catching up with all of it.
import { ApiKey } from '../src/protocol/index.js';
import { processCpuSeconds } from './child-broker.js';
import {
  machineNow, measureCopy, measureProduce, measureSteady, PARTITIONS, RECORD_BYTES, round, TOPIC, withTwoClusters,
} from './two-clusters.js';

await withTwoClusters('link', async (c) => {
  // 1. The single-node produce rate.
  const produced = await measureProduce(c);

  // 2. The link copies them: B's leader of each partition fetches from A's.
  c.say('link: creating link bench-link on B and mirroring bench');
  const aCpu0 = processCpuSeconds(c.a.pid) ?? 0;
  const bCpu0 = processCpuSeconds(c.b.pid) ?? 0;
  const link = await c.bClient.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 64, resourceName: 'bench-link', configs: [{ name: 'bootstrap.servers', configOperation: 0, value: c.aBootstrap }] }], validateOnly: false }, 1);
  if (link.responses[0].errorCode !== 0) throw new Error(`link create: ${link.responses[0].errorMessage}`);
  const mirrored = await c.bClient.admin(ApiKey.CreateTopics, { topics: [{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [{ name: 'link.name', value: 'bench-link' }] }], timeoutMs: 30_000, validateOnly: false }, 7);
  if (mirrored.topics[0].errorCode !== 0) throw new Error(`mirror ${TOPIC}: ${mirrored.topics[0].errorMessage}`);
  const linkRate = await measureCopy(c, TOPIC, produced.total, 'link');
  const targetCpu = (processCpuSeconds(c.b.pid) ?? bCpu0) - bCpu0;

  // 3. Replication latency at a steady rate.
  const steady = await measureSteady(c, TOPIC);

  console.log(JSON.stringify({
    bench: 'link', machine: machineNow(), recordBytes: RECORD_BYTES, partitions: PARTITIONS, records: produced.total,
    produce: { recordsPerSecond: round(produced.recordsPerSecond, 0), mbPerSecond: round((produced.recordsPerSecond * RECORD_BYTES) / 1048576) },
    link: {
      recordsPerSecond: round(linkRate, 0), mbPerSecond: round((linkRate * RECORD_BYTES) / 1048576),
      cpuSecondsTargetBroker: round(targetCpu, 2), cpuSecondsSourceBroker: round((processCpuSeconds(c.a.pid) ?? aCpu0) - aCpu0, 2),
    },
    linkOverProduce: round(linkRate / produced.recordsPerSecond, 3),
    steady,
    targets: { steadyP99Ms: 200 },
  }, null, 2));
}, { targetFirst: true });
