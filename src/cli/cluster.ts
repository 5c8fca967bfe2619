// `logline cluster info`: the cluster id, controller, brokers and the quorum in one line.
// `logline cluster status`: every registered broker with its broker epoch and whether it is fenced
// (from a node's HTTP API, /v1/brokers: Kafka's APIs list only unfenced brokers and no epochs), plus
// the metadata quorum from DescribeQuorum (voters, observers, each one's log end offset and lag
// behind the high watermark, the leader and epoch).
// `logline cluster elect-leaders`: kafka-leader-election.sh — preferred (or, explicitly, unclean)
// leader election for some partitions or all of them.
// `logline cluster start --nodes N`: a local cluster of combined broker+controller nodes in this
// process (startCluster), until Ctrl-C; `--controllers C --brokers M` for separate roles.
import { ClusterClient, KafkaError } from '../client/index.js';
import { ApiKey, ErrorCode, errorName } from '../protocol/index.js';
import { startCluster, consoleLogger, quietLogger } from '../node/index.js';
import { startHttpListener, type BrokersView } from '../http/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, bootstrapServers, table, toJson, clientOptions } from './output.js';

const START_FLAGS: Record<string, FlagSpec> = {
  nodes: { type: 'number', help: 'how many combined broker+controller nodes (default 3)' },
  controllers: { type: 'number', help: 'separate roles: this many controller-only nodes (ids 1..C; with --brokers)' },
  brokers: { type: 'number', help: 'separate roles: this many broker-only nodes (ids C+1..C+M; with --controllers)' },
  'data-dir': { type: 'string', help: 'one directory per node under it (default ./logline-cluster)' },
  'broker-port': { type: 'number', help: 'the first broker port; node i listens on it + i - 1 (default 9092; 0: free ports)' },
  'controller-port': { type: 'number', help: 'the first controller port (default: free ports, printed)' },
  'http-port': { type: 'number', help: 'the first HTTP port (http.listener); node i listens on it + i - 1 (default 9644; 0: free ports)' },
  set: { type: 'string', repeatable: true, help: 'key=value for any Kafka broker property, on every node' },
  verbose: { type: 'boolean', short: 'v', help: 'log what each node does' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

const ELECT_FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  'election-type': { type: 'string', help: 'preferred (the first replica leads again) or unclean (a replica outside the ISR may lead: may lose data)' },
  topic: { type: 'string', help: 'the topic (with --partition)' },
  partition: { type: 'number', help: 'the partition of --topic' },
  'all-topic-partitions': { type: 'boolean', help: 'every partition of every topic' },
};

/** Where `cluster status` finds a node's HTTP API when --http is not given. */
export const HTTP_ENV = 'LOGLINE_HTTP';

const STATUS_FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  http: { type: 'string', help: `host:port of a node's HTTP API, for broker epochs and fencing (default $${HTTP_ENV}, else 127.0.0.1:9644, http.listener's default)` },
};

const USAGE = 'usage: logline cluster info|status|start|elect-leaders [options]';

export async function clusterCommand(argv: string[]): Promise<number> {
  const verb = argv[0];
  if (verb === 'start') return clusterStart(argv.slice(1));
  if (verb === 'elect-leaders') return electLeaders(argv.slice(1));
  const { positionals, flags } = parseArgs(argv, STATUS_FLAGS);
  if (flags.help) {
    console.log(helpText('logline cluster info|status [options]', 'Describe the cluster (status adds broker epochs, fencing and the metadata quorum); `logline cluster start --help` starts a local one.', STATUS_FLAGS));
    return 0;
  }
  if (positionals[0] !== 'info' && positionals[0] !== 'status') throw new UsageError(USAGE);
  const client = new ClusterClient(clientOptions(flags));
  try {
    const topics = await client.metadata(null);
    const brokers = [...client.brokers.values()].map((b) => ({ id: b.nodeId, host: b.host, port: b.port, rack: b.rack }));
    const info = { clusterId: client.clusterId, controllerId: client.controllerId, brokers, topics: topics.length };
    if (positionals[0] === 'info') {
      // The quorum in one line (a broker without DescribeQuorum leaves it out).
      const quorum = await describeQuorum(client).catch(() => null);
      const q = quorum && { leaderId: quorum.leaderId, leaderEpoch: quorum.leaderEpoch, voters: quorum.voters.map((v) => v.id), observers: quorum.observers.map((o) => o.id) };
      const line = q ? `\nmetadata quorum: leader ${q.leaderId}  epoch ${q.leaderEpoch}  voters ${q.voters.join(',')}  observers ${q.observers.join(',') || '-'}` : '';
      // The active controller is the quorum's leader; Metadata's controllerId names a live broker
      // clients can reach, which differs when controllers run apart from brokers (as Kafka answers).
      const shown = { ...info, controllerId: q ? q.leaderId : info.controllerId };
      console.log(flags.json ? toJson({ ...shown, ...(q ? { quorum: q } : {}) }) : `cluster ${shown.clusterId}  controller ${shown.controllerId}  topics ${shown.topics}${line}\n\n${table(brokers)}`);
      return 0;
    }
    const quorum = await describeQuorum(client);
    info.controllerId = quorum.leaderId;
    const address = httpAddress(flags);
    const registered = await fetchBrokers(address).catch((e: Error) => e);
    if (flags.json) {
      console.log(toJson({ ...info, ...(registered instanceof Error ? {} : { registeredBrokers: registered.brokers }), quorum }));
      return 0;
    }
    const brokerTable = registered instanceof Error
      ? `${table(brokers)}\n(broker epochs and fencing: the HTTP API at ${address} did not answer: ${registered.message}; name one with --http)`
      : table(registered.brokers.map((b) => {
        const e = b.endpoints[0];
        return {
          id: b.id, host: e?.host ?? '-', port: e?.port ?? '-', rack: b.rack, epoch: b.brokerEpoch,
          state: b.fenced ? 'fenced' : b.inControlledShutdown ? 'controlled-shutdown' : 'unfenced',
          // Only the active controller knows sessions: another node's answer leaves the column out.
          ...(registered.activeController ? { alive: b.alive ? 'yes' : 'no' } : {}),
        };
      }));
    const rows = [...quorum.voters.map((r) => ({ ...r, role: r.id === quorum.leaderId ? 'leader' : 'voter' })), ...quorum.observers.map((r) => ({ ...r, role: 'observer' }))];
    console.log(`cluster ${info.clusterId}  controller ${info.controllerId}  topics ${info.topics}\n\n${brokerTable}\n\n`
      + `metadata quorum: leader ${quorum.leaderId}  epoch ${quorum.leaderEpoch}  high watermark ${quorum.highWatermark}\n\n`
      + table(rows, ['id', 'role', 'logEndOffset', 'lag', 'lastFetchMsAgo', 'lastCaughtUpMsAgo']));
    return 0;
  } finally {
    client.close();
  }
}

export function httpAddress(flags: Record<string, unknown>): string {
  const flag = flags.http;
  return typeof flag === 'string' ? flag : process.env[HTTP_ENV] || '127.0.0.1:9644';
}

/** A node's /v1/brokers: every registration, fenced ones included, with broker epochs. */
export async function fetchBrokers(address: string): Promise<BrokersView> {
  const res = await fetch(`http://${address}/v1/brokers`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return await res.json() as BrokersView;
}

interface ReplicaRow { id: number; logEndOffset: string; lag: string; lastFetchMsAgo: number | null; lastCaughtUpMsAgo: number | null }
export interface QuorumStatus { leaderId: number; leaderEpoch: number; highWatermark: string; voters: ReplicaRow[]; observers: ReplicaRow[] }

/** DescribeQuorum, asked of the leader's broker (another node answers NOT_LEADER_OR_FOLLOWER naming it). */
export async function describeQuorum(client: ClusterClient): Promise<QuorumStatus> {
  const body = { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] };
  let conn = await client.any();
  for (let hop = 0; ; hop++) {
    const r = await conn.send(ApiKey.DescribeQuorum, conn.version(ApiKey.DescribeQuorum, 2), body);
    const p = r.topics[0]?.partitions[0];
    if (r.errorCode !== 0 || p === undefined) throw new KafkaError(r.errorCode || ErrorCode.UNKNOWN_SERVER_ERROR, r.errorMessage ?? 'DescribeQuorum');
    if (p.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER && p.leaderId >= 0 && hop === 0) { conn = await client.broker(p.leaderId); continue; }
    if (p.errorCode !== 0) throw new KafkaError(p.errorCode, `DescribeQuorum: ${p.errorMessage ?? 'no leader'}`);
    const now = Date.now();
    const row = (v: { replicaId: number; logEndOffset: bigint; lastFetchTimestamp: bigint; lastCaughtUpTimestamp: bigint }): ReplicaRow => ({
      id: v.replicaId, logEndOffset: String(v.logEndOffset), lag: String(p.highWatermark > v.logEndOffset ? p.highWatermark - v.logEndOffset : 0n),
      lastFetchMsAgo: v.lastFetchTimestamp < 0n ? null : Math.max(0, now - Number(v.lastFetchTimestamp)),
      lastCaughtUpMsAgo: v.lastCaughtUpTimestamp < 0n ? null : Math.max(0, now - Number(v.lastCaughtUpTimestamp)),
    });
    return { leaderId: p.leaderId, leaderEpoch: p.leaderEpoch, highWatermark: String(p.highWatermark), voters: p.currentVoters.map(row), observers: p.observers.map(row) };
  }
}

async function electLeaders(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, ELECT_FLAGS);
  if (flags.help) {
    console.log(helpText('logline cluster elect-leaders --election-type preferred|unclean (--topic T --partition P | --all-topic-partitions)',
      'Elects leaders as kafka-leader-election.sh does: preferred moves leadership back to each partition\'s first replica.', ELECT_FLAGS));
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`logline cluster elect-leaders: unexpected argument ${positionals[0]}`);
  const type = flags['election-type'] as string | undefined;
  if (type !== 'preferred' && type !== 'unclean') throw new UsageError('--election-type: preferred or unclean');
  const all = flags['all-topic-partitions'] === true;
  const topic = flags.topic as string | undefined;
  const partition = flags.partition as number | undefined;
  if (all === (topic !== undefined)) throw new UsageError('give either --topic with --partition, or --all-topic-partitions');
  if (topic !== undefined && (partition === undefined || !Number.isInteger(partition) || partition < 0)) throw new UsageError('--topic needs --partition N');
  const client = new ClusterClient(clientOptions(flags));
  try {
    const r = await client.admin(ApiKey.ElectLeaders, {
      electionType: type === 'preferred' ? 0 : 1, timeoutMs: 30_000,
      topicPartitions: all ? null : [{ topic, partitions: [partition] }],
    }, 2);
    if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage ?? 'ElectLeaders');
    const rows = (r.replicaElectionResults as { topic: string; partitionResult: { partitionId: number; errorCode: number; errorMessage: string | null }[] }[])
      .flatMap((t) => t.partitionResult.map((p) => ({
        topic: t.topic, partition: p.partitionId,
        result: p.errorCode === 0 ? 'elected' : p.errorCode === ErrorCode.ELECTION_NOT_NEEDED ? 'not needed' : errorName(p.errorCode),
        ...(p.errorCode !== 0 && p.errorCode !== ErrorCode.ELECTION_NOT_NEEDED && p.errorMessage ? { message: p.errorMessage } : {}),
      })))
      .sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
    console.log(flags.json ? toJson(rows) : rows.length === 0 ? 'no partitions' : table(rows));
    return rows.some((x) => x.result !== 'elected' && x.result !== 'not needed') ? 1 : 0;
  } finally {
    client.close();
  }
}

async function clusterStart(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, START_FLAGS);
  if (flags.help) {
    console.log(helpText('logline cluster start [options]', 'Runs a local cluster on 127.0.0.1 in this process until interrupted: combined broker+controller nodes, or controller-only and broker-only nodes with --controllers/--brokers.', START_FLAGS));
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`logline cluster start: unexpected argument ${positionals[0]}`);
  const split = flags.controllers !== undefined || flags.brokers !== undefined;
  if (split && flags.nodes !== undefined) throw new UsageError('--nodes: not with --controllers/--brokers');
  const count = (flag: string, n: number) => {
    if (!Number.isInteger(n) || n < 1 || n > 64) throw new UsageError(`--${flag}: expected 1-64, got ${n}`);
    return n;
  };
  const controllers = count(split ? 'controllers' : 'nodes', ((split ? flags.controllers : flags.nodes) as number | undefined) ?? 3);
  const brokers = split ? count('brokers', (flags.brokers as number | undefined) ?? 3) : controllers;
  const firstBroker = (flags['broker-port'] as number | undefined) ?? 9092;
  const firstController = flags['controller-port'] as number | undefined;
  const firstHttp = (flags['http-port'] as number | undefined) ?? 9644;
  const config: Record<string, string> = {};
  for (const kv of (flags.set as string[] | undefined) ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--set expects key=value, got "${kv}"`);
    config[kv.slice(0, eq).trim()] = kv.slice(eq + 1).trim();
  }
  const range = (first: number, n: number) => Array.from({ length: n }, (_, i) => first + i);
  // Node ids are 1..controllers+brokers (split) or 1..nodes, in the order of the ports.
  const nodeConfig = firstHttp === 0 || config['http.listener'] !== undefined ? {}
    : Object.fromEntries(range(1, split ? controllers + brokers : controllers).map((id) => [id, { 'http.listener': `127.0.0.1:${firstHttp + id - 1}` }]));
  const cluster = await startCluster({
    ...(split ? { controllers, brokers } : { nodes: controllers }),
    dataDir: (flags['data-dir'] as string | undefined) ?? './logline-cluster', config,
    ...(firstBroker !== 0 ? { brokerPorts: range(firstBroker, brokers) } : {}),
    ...(firstController !== undefined && firstController !== 0 ? { controllerPorts: range(firstController, controllers) } : {}),
    logger: flags.verbose ? consoleLogger : quietLogger,
    http: startHttpListener, nodeConfig,
  });
  const n = cluster.nodes.length;
  console.log(`cluster ${cluster.clusterId}: ${split ? `${controllers} controller${controllers === 1 ? '' : 's'}, ${brokers} broker${brokers === 1 ? '' : 's'}` : `${n} node${n === 1 ? '' : 's'}`}`);
  console.log(table(cluster.nodes.map((x) => ({
    node: x.nodeId, roles: x.roles.join(','), broker: x.brokerPort === 0 ? '-' : `${x.host}:${x.brokerPort}`,
    controller: x.controllerPort === 0 ? '-' : `${x.host}:${x.controllerPort}`, http: x.httpPort === 0 ? '-' : `${x.host}:${x.httpPort}`, dataDir: x.dataDir,
  }))));
  console.log(`\nbootstrap servers: ${cluster.bootstrap}`);
  console.log(`controller.quorum.voters=${cluster.controllerQuorumVoters}`);
  console.log('Ctrl-C stops the cluster.');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await cluster.close();
  console.log('stopped');
  return 0;
}
