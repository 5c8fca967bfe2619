// `logline verify`: runs a recorded workload against a Kafka-protocol cluster (Logline or any
// other), with faults when it starts the nodes itself (--cluster N), and checks the history for
// the anomaly classes of the published Kafka analyses. Prints a verdict per class with examples
// (--json: the report and the whole history), writes the history (--history FILE) and a timeline
// picture (--timeline FILE.svg). Exit code 0: no anomaly; 1: an anomaly, or the run failed; 2: usage.
import { writeFileSync } from 'node:fs';
import { limits } from '../util/index.js';
import { NEMESIS_FAULTS, runVerify, timelineSvg, WORKLOAD_DEFAULTS, type NemesisFault, type NemesisOptions, type VerifyResult } from '../verify/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, clientOptions, table, toJson } from './output.js';
import { Progress } from './progress.js';

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  cluster: { type: 'number', help: `start this many logline server nodes on loopback ports (1-${limits.verifyClusterNodesMax}) and run against them, with faults; -b is then ignored` },
  ops: { type: 'number', help: `operations to invoke at most (default ${WORKLOAD_DEFAULTS.opsMax})` },
  seconds: { type: 'number', help: `run the workload at most this long (default ${WORKLOAD_DEFAULTS.durationMs / 1000})` },
  topic: { type: 'string', help: 'the topic to create and use (default logline-verify-<time>; it must not exist)' },
  partitions: { type: 'number', help: `partitions of the topic (default ${WORKLOAD_DEFAULTS.partitions})` },
  'replication-factor': { type: 'number', help: 'replicas per partition (default: 3, or the number of brokers when fewer)' },
  producers: { type: 'number', help: `idempotent producers (default ${WORKLOAD_DEFAULTS.producers})` },
  'txn-producers': { type: 'number', help: `transactional consume-transform-produce processes (default ${WORKLOAD_DEFAULTS.txnProducers})` },
  consumers: { type: 'number', help: `consumers sharing one group's committed offsets (default ${WORKLOAD_DEFAULTS.consumers})` },
  workload: { type: 'string', help: 'assign (default): the consumers take partitions by hand; group: they are members of a KIP-848 consumer group (ConsumerGroupHeartbeat), rebalanced by the coordinator' },
  'abort-ratio': { type: 'number', help: `share of transactions aborted on purpose, 0-1 (default ${WORKLOAD_DEFAULTS.abortRatio})` },
  faults: { type: 'string', help: 'with --cluster: a list of kill, pause, isolate (root: network namespaces), disk-full (root: a tmpfs per node, filled below log.dir.min.free.bytes), or none (default kill,pause)' },
  'fault-interval-ms': { type: 'number', help: 'with --cluster: time between faults (default 4000)' },
  'fault-duration-ms': { type: 'number', help: 'with --cluster: how long a node stays killed, paused, isolated or full (default 3000)' },
  'faults-max': { type: 'number', help: 'with --cluster: at most this many faults (default 10)' },
  seed: { type: 'number', help: 'seed of the workload\'s and the faults\' choices (default: from the time)' },
  'request-timeout-ms': { type: 'number', help: `the clients' request timeout (default ${WORKLOAD_DEFAULTS.requestTimeoutMs})` },
  history: { type: 'string', help: 'write the whole history as JSON to this file' },
  timeline: { type: 'string', help: 'write a timeline picture (faults, throughput, latency) as SVG to this file' },
  examples: { type: 'number', help: 'examples shown per anomaly class (default 5)' },
  quiet: { type: 'boolean', help: 'no progress lines' },
};

const SUMMARY = [
  'Run a recorded workload (idempotent producers, transactional consume-transform-produce, consumers',
  'sharing a group\'s offsets) against a cluster, read every partition at the end, and check the history',
  'for lost writes, duplicates, aborted reads, nonmonotonic and skipping polls, inconsistent offsets and',
  'cycles between transactions (G0, G1c). With --cluster N it starts the nodes and kills and pauses them.',
].join('\n');

function count(flags: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const v = (flags[name] as number | undefined) ?? fallback;
  if (!Number.isInteger(v) || v < min || v > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
  return v;
}

function nemesisOptions(flags: Record<string, unknown>, seed: number): NemesisOptions {
  const text = (flags.faults as string | undefined) ?? 'kill,pause';
  const faults = text === 'none' ? [] : text.split(',').map((s) => s.trim());
  for (const f of faults) if (!(NEMESIS_FAULTS as readonly string[]).includes(f)) throw new UsageError(`--faults: ${NEMESIS_FAULTS.join(', ')} or none, not "${f}"`);
  if ((faults.includes('isolate') || faults.includes('disk-full')) && process.getuid?.() !== 0) throw new UsageError('--faults isolate and disk-full need root (network namespaces, tmpfs mounts)');
  return {
    faults: faults as NemesisFault[], seed: seed ^ 0x5bd1e995,
    intervalMs: count(flags, 'fault-interval-ms', 4000, 0, 3_600_000),
    durationMs: count(flags, 'fault-duration-ms', 3000, 0, 3_600_000),
    faultsMax: count(flags, 'faults-max', 10, 0, limits.verifyFaultsMax),
  };
}

export async function verifyCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  if (flags.help) { console.log(helpText('logline verify [options]', SUMMARY, FLAGS)); return 0; }
  if (positionals.length > 0) throw new UsageError(`logline verify: unexpected argument ${positionals[0]}`);
  const nodes = flags.cluster === undefined ? null : count(flags, 'cluster', 3, 1, limits.verifyClusterNodesMax);
  if (nodes === null && (flags.faults !== undefined || flags['faults-max'] !== undefined)) throw new UsageError('--faults needs --cluster N: faults are injected only into nodes this command started');
  const seed = count(flags, 'seed', Date.now() % 0x7fffffff, 0, 0x7fffffff);
  const abortRatio = (flags['abort-ratio'] as number | undefined) ?? WORKLOAD_DEFAULTS.abortRatio;
  if (!(abortRatio >= 0 && abortRatio <= 1)) throw new UsageError('--abort-ratio must be from 0 to 1');
  const opsMax = count(flags, 'ops', WORKLOAD_DEFAULTS.opsMax, 1, limits.verifyOpsMax);
  const consumerMode = (flags.workload as string | undefined) ?? 'assign';
  if (consumerMode !== 'assign' && consumerMode !== 'group') throw new UsageError(`--workload: assign or group, not "${consumerMode}"`);
  const quiet = flags.quiet === true || flags.json === true;
  const bar = quiet ? null : new Progress({ label: 'verify', total: opsMax, unit: 'operations' });
  let interrupted = false;
  const onSigint = () => { interrupted = true; };
  process.once('SIGINT', onSigint);
  let result: VerifyResult;
  try {
    result = await runVerify({
      client: clientOptions(flags),
      workload: {
        ...WORKLOAD_DEFAULTS, seed, abortRatio, opsMax, consumerMode,
        ...(flags.topic !== undefined ? { topic: flags.topic as string } : {}),
        durationMs: count(flags, 'seconds', WORKLOAD_DEFAULTS.durationMs / 1000, 1, limits.verifyDurationMsMax / 1000) * 1000,
        partitions: count(flags, 'partitions', WORKLOAD_DEFAULTS.partitions, 1, 1000),
        replicationFactor: count(flags, 'replication-factor', -1, -1, 32),
        producers: count(flags, 'producers', WORKLOAD_DEFAULTS.producers, 0, limits.verifyProcessesMax),
        txnProducers: count(flags, 'txn-producers', WORKLOAD_DEFAULTS.txnProducers, 0, limits.verifyProcessesMax),
        consumers: count(flags, 'consumers', WORKLOAD_DEFAULTS.consumers, 0, limits.verifyProcessesMax),
        requestTimeoutMs: count(flags, 'request-timeout-ms', WORKLOAD_DEFAULTS.requestTimeoutMs, 100, 600_000),
      },
      ...(nodes !== null ? { cluster: { nodes }, nemesis: nemesisOptions(flags, seed) } : {}),
      examplesMax: count(flags, 'examples', 5, 0, 1000),
      onProgress: (ops) => bar?.update(ops),
      stop: () => interrupted,
    });
  } finally {
    process.off('SIGINT', onSigint);
  }
  bar?.finish(result.history.filter((op) => op.type === 'invoke').length);
  if (typeof flags.history === 'string') writeFileSync(flags.history, toJson({ topic: result.topic, seed, history: result.history }) + '\n');
  if (typeof flags.timeline === 'string') {
    writeFileSync(flags.timeline, timelineSvg(result.history, { title: `logline verify: ${result.topic}, ${nodes === null ? result.bootstrap : `${nodes} nodes`}, seed ${seed}: ${result.report.valid ? 'no anomaly' : 'ANOMALIES'}` }));
  }
  console.log(flags.json ? toJson({ topic: result.topic, bootstrap: result.bootstrap, seed, durationMs: result.durationMs, ...result.report, history: result.history }) : human(result, seed));
  return result.report.valid ? 0 : 1;
}

function human(r: VerifyResult, seed: number): string {
  const s = r.report.stats;
  const lines = [
    `${s.ops} operations in ${(r.durationMs / 1000).toFixed(1)} s on topic ${r.topic} (seed ${seed})`,
    `sends ${s.sends.ok} ok, ${s.sends.fail} failed, ${s.sends.info} unknown; transactions ${s.txns.ok} committed, ${s.txns.fail} aborted or failed, ${s.txns.info} unknown; `
      + `polls ${s.polls}, records read ${s.recordsRead}; faults ${s.faults}`,
    '',
    table(r.report.classes.map((c) => ({ class: c.name, verdict: c.verdict, count: c.count, means: c.means }))),
  ];
  for (const c of r.report.classes.filter((x) => x.count > 0)) {
    lines.push('', `${c.name} (${c.count}${c.examples.length < c.count ? `, first ${c.examples.length}` : ''}):`, ...c.examples.map((e) => `  ${toJson(e)}`));
  }
  if (r.report.unseen.count > 0) lines.push('', `unseen: ${r.report.unseen.count} acknowledged send(s) no reader reached (not proof of loss), e.g. ${toJson(r.report.unseen.examples[0])}`);
  const bad = r.report.classes.filter((c) => c.verdict === 'anomaly').map((c) => c.name);
  lines.push('', bad.length === 0 ? 'verdict: no anomaly found' : `verdict: ANOMALIES: ${bad.join(', ')}`);
  return lines.join('\n');
}
