// `logline doctor`: checks a running cluster against the production checklist Kafka operators are
// given (RF 3, min.insync.replicas 2, unclean election off, no under-replicated/offline/under-min-ISR
// partitions, a healthy controller quorum, no fenced brokers, no consumer group falling behind, no
// tiered storage copy lag growing, disks with room (above each broker's log.dir.min.free.bytes,
// warned under its log.dir.free.bytes.alert.threshold), producers on acks=all with idempotence) and
// prints each item as PASS, WARN or FAIL with why. Exit code 1 when any item FAILs.
//
// Gathering and judging are apart: `gather` asks the cluster (Kafka APIs through src/client, plus
// the nodes' HTTP API for what Kafka's APIs do not tell: fenced registrations and what producers
// send), and `judge` is a pure function of what was gathered, so each rule is testable alone.
import { ClusterClient, KafkaError, type TopicInfo } from '../client/index.js';
import { ApiKey } from '../protocol/index.js';
import type { BrokersView, NodeView } from '../http/index.js';
import { partitionKey, partitionName } from '../util/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, bootstrapServers, table, toJson, clientOptions } from './output.js';
import { HTTP_ENV, describeQuorum, fetchBrokers, httpAddress, type QuorumStatus } from './cluster.js';
import { committedOffsets, coordinatorFor, listOffsets, type PartitionRef } from './group.js';

export type Status = 'PASS' | 'WARN' | 'FAIL';
export interface CheckResult { status: Status; check: string; detail: string }

/** Kafka's production floor: three copies, two of which must acknowledge. */
const REPLICATION_FACTOR_MIN = 3;
const MIN_INSYNC_REPLICAS_MIN = 2;
/** Items named in one line; the rest are counted. */
const ITEMS_SHOWN_MAX = 5;

export interface Thresholds {
  /** A log directory's volume fuller than this many percent warns; fuller than diskFailPct fails. */
  diskWarnPct: number;
  diskFailPct: number;
  /** A voter that has not fetched from the quorum leader for this long counts as down. */
  quorumFetchTimeoutMs: number;
  /** A tiered topic with more rolled-but-uncopied segments than this per partition warns (default 2). */
  remoteCopyLagSegmentsPerPartition?: number;
}

/**
 * Copy lag, per partition, a healthy tiered topic stays within: a segment that rolled since the
 * copy task's last run waits up to remote.log.manager.task.interval.ms, and a second may roll
 * meanwhile under load. Beyond that copying is not keeping up (the store slow, down or refusing),
 * and as local retention deletes only copied segments, every lagging byte is disk the broker cannot
 * free: the "local.retention.bytes + two segments" bound bench:tiered checks.
 */
const REMOTE_COPY_LAG_SEGMENTS_PER_PARTITION = 2;

export interface GroupLag { group: string; before: bigint; after: bigint }

/** What `gather` learned; an Error where a source did not answer. */
export interface Observed {
  topics: TopicInfo[];
  /** Brokers in the Metadata response (unfenced ones). */
  liveBrokers: number[];
  registered: BrokersView | Error;
  /** Effective config values per topic (the topic's own or the broker default). */
  topicConfigs: Map<string, Map<string, string | null>> | Error;
  brokerConfigs: Map<string, string | null> | Error;
  quorum: QuorumStatus | Error;
  /**
   * DescribeLogDirs of each live broker, with its log.dir.min.free.bytes and
   * log.dir.free.bytes.alert.threshold (DescribeConfigs; absent or null when it did not say).
   */
  logDirs: { brokerId: number; dirs: { path: string; errorCode: number; totalBytes: bigint; usableBytes: bigint }[] | Error; minFreeBytes?: bigint | null; alertFreeBytes?: bigint | null }[];
  /** /v1/node of each HTTP address given. */
  nodes: { address: string; view: NodeView | Error }[];
  /** /v1/node of each HTTP address again after the lag interval (tiered copy lag growing); null when not sampled. */
  nodesLater: { address: string; view: NodeView | Error }[] | null;
  /** Committed-offset lag sampled twice, `lagIntervalMs` apart; null when not sampled. */
  lag: { intervalMs: number; groups: GroupLag[]; errors: string[] } | null;
}

const listed = (items: string[]) => items.length <= ITEMS_SHOWN_MAX ? items.join(', ') : `${items.slice(0, ITEMS_SHOWN_MAX).join(', ')} and ${items.length - ITEMS_SHOWN_MAX} more`;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const failed = (e: Error) => e.message || e.name;

function brokerCount(o: Observed): number {
  return o.registered instanceof Error ? o.liveBrokers.length : o.registered.brokers.length;
}

export function checkReplicationFactor(o: Observed): CheckResult {
  const check = 'replication factor';
  const brokers = brokerCount(o);
  if (brokers < REPLICATION_FACTOR_MIN) return { status: 'PASS', check, detail: `not applicable: ${plural(brokers, 'broker')} (checked from ${REPLICATION_FACTOR_MIN})` };
  const low = o.topics.map((t) => ({ name: t.name, rf: Math.min(...t.partitions.map((p) => p.replicas.length)) })).filter((t) => t.rf < REPLICATION_FACTOR_MIN);
  if (low.length === 0) return { status: 'PASS', check, detail: `every topic has ${REPLICATION_FACTOR_MIN} or more replicas (${plural(brokers, 'broker')})` };
  // One copy loses data with one disk; two copies cannot both stay available and refuse acks=all under min ISR 2.
  return {
    status: low.some((t) => t.rf < 2) ? 'FAIL' : 'WARN', check,
    detail: `${plural(low.length, 'topic')} below RF ${REPLICATION_FACTOR_MIN} with ${brokers} brokers: ${listed(low.map((t) => `${t.name} (RF ${t.rf})`))}`,
  };
}

function intConfig(configs: Map<string, string | null> | undefined, name: string): number | null {
  const v = configs?.get(name);
  return v === undefined || v === null ? null : Number(v);
}

export function checkMinInsyncReplicas(o: Observed): CheckResult {
  const check = 'min.insync.replicas';
  if (o.topicConfigs instanceof Error) return { status: 'WARN', check, detail: `not checked: DescribeConfigs failed: ${failed(o.topicConfigs)}` };
  const brokerDefault = o.brokerConfigs instanceof Error ? null : intConfig(o.brokerConfigs, 'min.insync.replicas');
  const low: string[] = [];
  const stopOnOneLoss: string[] = [];
  for (const t of o.topics) {
    const minIsr = intConfig(o.topicConfigs.get(t.name), 'min.insync.replicas');
    const rf = Math.min(...t.partitions.map((p) => p.replicas.length));
    // A single copy has no second replica to wait for: that is the replication factor's finding.
    if (minIsr === null || rf < 2) continue;
    if (minIsr < MIN_INSYNC_REPLICAS_MIN) low.push(`${t.name} (${minIsr})`);
    else if (minIsr >= rf) stopOnOneLoss.push(`${t.name} (${minIsr} of RF ${rf})`);
  }
  // With fewer than three brokers new topics cannot have RF 3 either, so the default is not judged.
  const defaultNote = brokerDefault !== null && brokerDefault < MIN_INSYNC_REPLICAS_MIN && brokerCount(o) >= REPLICATION_FACTOR_MIN
    ? `; the broker default is ${brokerDefault}, so new topics get it too` : '';
  if (low.length > 0) {
    return { status: 'FAIL', check, detail: `acks=all is acknowledged by a single replica in ${plural(low.length, 'topic')}: ${listed(low)}${defaultNote}` };
  }
  if (defaultNote !== '') return { status: 'WARN', check, detail: `every replicated topic has ${MIN_INSYNC_REPLICAS_MIN} or more${defaultNote}` };
  if (stopOnOneLoss.length > 0) {
    return { status: 'WARN', check, detail: `acks=all writes stop when any one replica is down in ${plural(stopOnOneLoss.length, 'topic')}: ${listed(stopOnOneLoss)}` };
  }
  return { status: 'PASS', check, detail: `every replicated topic has ${MIN_INSYNC_REPLICAS_MIN} or more${brokerDefault !== null ? ` (broker default ${brokerDefault})` : ''}` };
}

export function checkUncleanElection(o: Observed): CheckResult {
  const check = 'unclean.leader.election.enable';
  if (o.topicConfigs instanceof Error) return { status: 'WARN', check, detail: `not checked: DescribeConfigs failed: ${failed(o.topicConfigs)}` };
  const on = o.topics.filter((t) => o.topicConfigs instanceof Map && o.topicConfigs.get(t.name)?.get('unclean.leader.election.enable') === 'true').map((t) => t.name);
  const brokerOn = !(o.brokerConfigs instanceof Error) && o.brokerConfigs.get('unclean.leader.election.enable') === 'true';
  if (on.length === 0 && !brokerOn) return { status: 'PASS', check, detail: 'off everywhere' };
  const where = [...(brokerOn ? ['the broker default'] : []), ...(on.length > 0 ? [`${plural(on.length, 'topic')}: ${listed(on)}`] : [])];
  return { status: 'FAIL', check, detail: `on (a replica outside the ISR may lead and lose acknowledged writes) in ${where.join('; ')}` };
}

function partitionsWhere(o: Observed, pick: (p: TopicInfo['partitions'][number], t: TopicInfo) => boolean): string[] {
  return o.topics.flatMap((t) => t.partitions.filter((p) => pick(p, t)).map((p) => partitionName(t.name, p.partition)));
}

export function checkUnderReplicated(o: Observed): CheckResult {
  const check = 'under-replicated partitions';
  const under = partitionsWhere(o, (p) => p.leader >= 0 && p.isr.length < p.replicas.length);
  return under.length === 0
    ? { status: 'PASS', check, detail: 'every ISR holds every replica' }
    : { status: 'WARN', check, detail: `${plural(under.length, 'partition')} with replicas out of the ISR: ${listed(under)}` };
}

export function checkOffline(o: Observed): CheckResult {
  const check = 'offline partitions';
  const offline = partitionsWhere(o, (p) => p.leader < 0);
  return offline.length === 0
    ? { status: 'PASS', check, detail: 'every partition has a leader' }
    : { status: 'FAIL', check, detail: `${plural(offline.length, 'partition')} without a leader (no reads or writes): ${listed(offline)}` };
}

export function checkUnderMinIsr(o: Observed): CheckResult {
  const check = 'under-min-ISR partitions';
  if (o.topicConfigs instanceof Error) return { status: 'WARN', check, detail: `not checked: DescribeConfigs failed: ${failed(o.topicConfigs)}` };
  const configs = o.topicConfigs;
  const under = partitionsWhere(o, (p, t) => p.leader >= 0 && p.isr.length < (intConfig(configs.get(t.name), 'min.insync.replicas') ?? 1));
  return under.length === 0
    ? { status: 'PASS', check, detail: 'every ISR is at least min.insync.replicas' }
    : { status: 'FAIL', check, detail: `${plural(under.length, 'partition')} refuse acks=all writes (ISR below min.insync.replicas): ${listed(under)}` };
}

export function checkQuorum(o: Observed, t: Thresholds): CheckResult {
  const check = 'controller quorum';
  if (o.quorum instanceof Error) return { status: 'FAIL', check, detail: `DescribeQuorum failed: ${failed(o.quorum)}` };
  const q = o.quorum;
  if (q.leaderId < 0) return { status: 'FAIL', check, detail: 'no leader' };
  const voters = q.voters.length;
  const isDown = (v: QuorumStatus['voters'][number]) => v.id !== q.leaderId && (v.lastFetchMsAgo === null || v.lastFetchMsAgo > t.quorumFetchTimeoutMs);
  const down = q.voters.filter(isDown).map((v) => v.id);
  const behind = q.voters.filter((v) => !isDown(v) && v.id !== q.leaderId && (v.lastCaughtUpMsAgo === null || v.lastCaughtUpMsAgo > t.quorumFetchTimeoutMs)).map((v) => `${v.id} (lag ${v.lag})`);
  const summary = `leader ${q.leaderId}, epoch ${q.leaderEpoch}, ${voters - down.length} of ${voters} voters up`;
  const majority = Math.floor(voters / 2) + 1;
  if (voters - down.length < majority) return { status: 'FAIL', check, detail: `${summary}: below a majority (${majority}); down: ${down.join(', ')}` };
  if (down.length > 0 || behind.length > 0) {
    // One more lost voter and the quorum stops accepting metadata changes.
    const parts = [...(down.length > 0 ? [`not fetching for ${t.quorumFetchTimeoutMs} ms: ${down.join(', ')}`] : []), ...(behind.length > 0 ? [`not caught up: ${behind.join(', ')}`] : [])];
    return { status: 'WARN', check, detail: `${summary}; ${parts.join('; ')}` };
  }
  const lag = Math.max(0, ...q.voters.map((v) => Number(v.lag)));
  return { status: 'PASS', check, detail: `${summary}, largest voter lag ${lag}` };
}

export function checkFencedBrokers(o: Observed): CheckResult {
  const check = 'fenced brokers';
  if (o.registered instanceof Error) return { status: 'WARN', check, detail: `not checked: the HTTP API did not answer: ${failed(o.registered)}` };
  const fenced = o.registered.brokers.filter((b) => b.fenced).map((b) => String(b.id));
  const shuttingDown = o.registered.brokers.filter((b) => !b.fenced && b.inControlledShutdown).map((b) => String(b.id));
  const n = o.registered.brokers.length;
  if (fenced.length > 0) return { status: 'FAIL', check, detail: `${fenced.length} of ${n} registered brokers fenced (no heartbeat; their replicas are offline): ${listed(fenced)}` };
  if (shuttingDown.length > 0) return { status: 'WARN', check, detail: `in controlled shutdown: ${listed(shuttingDown)}` };
  return { status: 'PASS', check, detail: `all ${plural(n, 'registered broker')} unfenced` };
}

export function checkGroupLag(o: Observed): CheckResult {
  const check = 'consumer group lag';
  if (o.lag === null) return { status: 'PASS', check, detail: 'not sampled (--lag-interval-ms 0)' };
  const growing = o.lag.groups.filter((g) => g.after > g.before).map((g) => `${g.group} (${g.before} → ${g.after})`);
  const errors = o.lag.errors.length > 0 ? `; not measured: ${listed(o.lag.errors)}` : '';
  if (growing.length > 0) return { status: 'WARN', check, detail: `lag grew over ${o.lag.intervalMs} ms in ${plural(growing.length, 'group')}: ${listed(growing)}${errors}` };
  if (errors !== '') return { status: 'WARN', check, detail: `no group's lag grew over ${o.lag.intervalMs} ms${errors}` };
  return { status: 'PASS', check, detail: `no group's lag grew over ${o.lag.intervalMs} ms (${plural(o.lag.groups.length, 'group')})` };
}

/** Bytes as a person reads them (binary units, one decimal). */
function bytesText(n: bigint): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Number(n);
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return i === 0 ? `${n} bytes` : `${v.toFixed(1)} ${units[i]}`;
}

export function checkDisks(o: Observed, t: Thresholds): CheckResult {
  const check = 'disk usage';
  const full: { text: string; pct: number }[] = [];
  const problems: string[] = [];
  // Under log.dir.min.free.bytes (produce refused: FAIL) and under the alert threshold (WARN).
  const belowFloor: string[] = [];
  const belowAlert: string[] = [];
  let highest = 0;
  for (const b of o.logDirs) {
    if (b.dirs instanceof Error) { problems.push(`broker ${b.brokerId}: ${failed(b.dirs)}`); continue; }
    for (const d of b.dirs) {
      if (d.errorCode !== 0) { problems.push(`broker ${b.brokerId} ${d.path}: offline`); continue; }
      if (d.usableBytes >= 0n) {
        const floor = b.minFreeBytes ?? null;
        const alert = b.alertFreeBytes ?? null;
        if (floor !== null && floor > 0n && d.usableBytes < floor) {
          belowFloor.push(`broker ${b.brokerId} ${d.path} has ${bytesText(d.usableBytes)} usable, below log.dir.min.free.bytes ${bytesText(floor)} (produce refused until space is freed)`);
        } else if (alert !== null && d.usableBytes < alert) {
          belowAlert.push(`broker ${b.brokerId} ${d.path} has ${bytesText(d.usableBytes)} usable, below log.dir.free.bytes.alert.threshold ${bytesText(alert)}${floor !== null && floor > 0n ? ` (produce is refused below ${bytesText(floor)})` : ''}`);
        }
      }
      if (d.totalBytes <= 0n || d.usableBytes < 0n) continue;
      const pct = Number((d.totalBytes - d.usableBytes) * 1000n / d.totalBytes) / 10;
      highest = Math.max(highest, pct);
      if (pct > t.diskWarnPct) full.push({ text: `broker ${b.brokerId} ${d.path} ${pct}%`, pct });
    }
  }
  const offline = problems.some((p) => p.endsWith(': offline'));
  if (offline || belowFloor.length > 0 || full.some((f) => f.pct > t.diskFailPct)) return { status: 'FAIL', check, detail: listed([...problems, ...belowFloor, ...belowAlert, ...full.map((f) => f.text)]) };
  if (full.length > 0 || problems.length > 0 || belowAlert.length > 0) {
    return { status: 'WARN', check, detail: [...belowAlert, ...(full.length > 0 ? [`over ${t.diskWarnPct}% full: ${listed(full.map((f) => f.text))}`] : []), ...(problems.length > 0 ? [`not measured: ${listed(problems)}`] : [])].join('; ') };
  }
  return { status: 'PASS', check, detail: `every log directory under ${t.diskWarnPct}% full (highest ${highest}%)` };
}

export function checkProducers(o: Observed): CheckResult {
  const check = 'producer acks and idempotence';
  const answered = o.nodes.filter((n): n is { address: string; view: NodeView } => !(n.view instanceof Error));
  if (answered.length === 0) return { status: 'WARN', check, detail: `not checked: no HTTP API answered (${listed(o.nodes.map((n) => n.address))}; name every node's with --http)` };
  const total = { all: 0, allPlain: 0, one: 0, zero: 0 };
  for (const n of answered) {
    for (const c of n.view.produceRequests) {
      if (c.acks === 'all') { total.all += c.requests; if (!c.idempotent) total.allPlain += c.requests; } else if (c.acks === '1') total.one += c.requests; else total.zero += c.requests;
    }
  }
  const nodes = `node${answered.length === 1 ? '' : 's'} ${answered.map((n) => n.view.nodeId).join(', ')}`;
  const notAll = total.one + total.zero;
  if (notAll > 0 || total.allPlain > 0) {
    const parts = [...(total.one > 0 ? [`${total.one} with acks=1`] : []), ...(total.zero > 0 ? [`${total.zero} with acks=0`] : []), ...(total.allPlain > 0 ? [`${total.allPlain} acks=all without idempotence`] : [])];
    return { status: 'WARN', check, detail: `Produce requests since start on ${nodes}: ${parts.join(', ')} (set acks=all and enable.idempotence=true)` };
  }
  return { status: 'PASS', check, detail: total.all === 0 ? `no Produce requests seen on ${nodes}` : `${plural(total.all, 'Produce request')} on ${nodes}, all acks=all with idempotence` };
}

/**
 * Tiered storage: a copy lag (rolled segments not yet in remote storage) that grew between the two
 * samples, or that is above the threshold per partition (sampled once or twice), warns, as local
 * retention then waits and the disk fills (the store down or too slow).
 */
export function checkRemoteCopyLag(o: Observed, t?: Thresholds): CheckResult {
  const check = 'tiered storage copy lag';
  const lagOf = (nodes: Observed['nodes']) => {
    const out = new Map<string, { node: number; topic: string; segments: number; bytes: number }>();
    for (const n of nodes) {
      if (n.view instanceof Error) continue;
      for (const l of n.view.remoteCopyLag ?? []) out.set(`${n.view.nodeId}/${l.topic}`, { node: n.view.nodeId, ...l });
    }
    return out;
  };
  // A second sample only counts where some node answered it.
  const later = o.nodesLater?.some((n) => !(n.view instanceof Error)) === true ? o.nodesLater : null;
  const now = lagOf(later ?? o.nodes);
  if (now.size === 0) return { status: 'PASS', check, detail: o.nodes.every((n) => n.view instanceof Error) ? 'not checked: no HTTP API answered' : 'no tiered topic led by the nodes asked' };
  const before = lagOf(o.nodes);
  const show = (l: { node: number; topic: string; segments: number; bytes: number }, was?: number) => `${l.topic} on node ${l.node} (${was === undefined ? '' : `${was} → `}${plural(l.segments, 'segment')}, ${l.bytes} bytes)`;
  const growing = [...now].filter(([k, l]) => later !== null && l.segments > (before.get(k)?.segments ?? 0)).map(([k, l]) => show(l, before.get(k)?.segments ?? 0));
  if (growing.length > 0) return { status: 'WARN', check, detail: `copy lag grew over ${o.lag?.intervalMs ?? 0} ms in ${plural(growing.length, 'topic')}: ${listed(growing)} (is the remote store reachable? local retention waits for the copy)` };
  const perPartition = t?.remoteCopyLagSegmentsPerPartition ?? REMOTE_COPY_LAG_SEGMENTS_PER_PARTITION;
  const partitions = (topic: string) => o.topics.find((x) => x.name === topic)?.partitions.length ?? 1;
  // A topic's partitions may be led by several nodes: their lags add up against its partition count.
  const byTopic = new Map<string, number>();
  for (const l of now.values()) byTopic.set(l.topic, (byTopic.get(l.topic) ?? 0) + l.segments);
  const high = [...byTopic].filter(([topic, segments]) => segments > perPartition * partitions(topic))
    .map(([topic, segments]) => `${topic} (${plural(segments, 'segment')} over ${plural(partitions(topic), 'partition')})`);
  if (high.length > 0) {
    return { status: 'WARN', check, detail: `more than ${perPartition} uncopied segments per partition in ${plural(high.length, 'topic')}: ${listed(high)} (is the remote store reachable? local retention waits for the copy)` };
  }
  const lagging = [...now.values()].filter((l) => l.segments > 0).map((l) => show(l));
  const sampled = later === null ? ' (sampled once)' : ` over ${o.lag?.intervalMs ?? 0} ms`;
  return { status: 'PASS', check, detail: lagging.length === 0 ? `every rolled segment copied (${plural(now.size, 'tiered topic')})` : `copy lag not growing${sampled}: ${listed(lagging)}` };
}

/** Every item of the checklist, in the order printed. */
export function judge(o: Observed, t: Thresholds): CheckResult[] {
  return [
    checkReplicationFactor(o), checkMinInsyncReplicas(o), checkUncleanElection(o),
    checkUnderReplicated(o), checkOffline(o), checkUnderMinIsr(o),
    checkQuorum(o, t), checkFencedBrokers(o), checkGroupLag(o), checkDisks(o, t), checkProducers(o), checkRemoteCopyLag(o, t),
  ];
}

const asError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function describeConfigs(client: ClusterClient, topics: string[], brokerId: number | undefined): Promise<Pick<Observed, 'topicConfigs' | 'brokerConfigs'>> {
  const toMap = (configs: { name: string; value: string | null }[]) => new Map(configs.map((c) => [c.name, c.value]));
  const topicConfigs = await (async () => {
    if (topics.length === 0) return new Map<string, Map<string, string | null>>();
    const r = await client.admin(ApiKey.DescribeConfigs, { resources: topics.map((resourceName) => ({ resourceType: 2, resourceName, configurationKeys: null })), includeSynonyms: false, includeDocumentation: false }, 4);
    const out = new Map<string, Map<string, string | null>>();
    for (const res of r.results) {
      if (res.errorCode !== 0) throw new KafkaError(res.errorCode, `topic ${res.resourceName}: ${res.errorMessage ?? ''}`);
      out.set(res.resourceName, toMap(res.configs));
    }
    return out;
  })().catch(asError);
  // A broker describes only itself (resource name = its id).
  const brokerConfigs = brokerId === undefined ? new Error('no live broker') : await (async () => {
    const conn = await client.broker(brokerId);
    const r = await conn.send(ApiKey.DescribeConfigs, conn.version(ApiKey.DescribeConfigs, 4), { resources: [{ resourceType: 4, resourceName: String(brokerId), configurationKeys: ['min.insync.replicas', 'unclean.leader.election.enable'] }], includeSynonyms: false, includeDocumentation: false });
    const res = r.results[0];
    if (res.errorCode !== 0) throw new KafkaError(res.errorCode, res.errorMessage);
    return toMap(res.configs);
  })().catch(asError);
  return { topicConfigs, brokerConfigs };
}

/** A broker's free-space floor and alert threshold as it reports them (DescribeConfigs of the broker itself). */
async function freeSpaceConfigsOf(client: ClusterClient, brokerId: number): Promise<{ minFreeBytes: bigint | null; alertFreeBytes: bigint | null }> {
  try {
    const conn = await client.broker(brokerId);
    const r = await conn.send(ApiKey.DescribeConfigs, conn.version(ApiKey.DescribeConfigs, 4), { resources: [{ resourceType: 4, resourceName: String(brokerId), configurationKeys: ['log.dir.min.free.bytes', 'log.dir.free.bytes.alert.threshold'] }], includeSynonyms: false, includeDocumentation: false });
    const res = r.results[0];
    if (res.errorCode !== 0) throw new KafkaError(res.errorCode, res.errorMessage);
    const value = (name: string) => { const v = res.configs.find((c: { name: string; value: string | null }) => c.name === name)?.value; return v === undefined || v === null || !/^\d+$/.test(v) ? null : BigInt(v); };
    return { minFreeBytes: value('log.dir.min.free.bytes'), alertFreeBytes: value('log.dir.free.bytes.alert.threshold') };
  } catch {
    // Not a Logline broker (or an older one): judged by the percentages only.
    return { minFreeBytes: null, alertFreeBytes: null };
  }
}

async function logDirsOf(client: ClusterClient, brokerId: number): Promise<Observed['logDirs'][number]['dirs']> {
  try {
    const conn = await client.broker(brokerId);
    const r = await conn.send(ApiKey.DescribeLogDirs, conn.version(ApiKey.DescribeLogDirs, 4), { topics: [] });
    if (r.errorCode) throw new KafkaError(r.errorCode);
    return r.results.map((d: { logDir: string; errorCode: number; totalBytes?: bigint; usableBytes?: bigint }) => ({ path: d.logDir, errorCode: d.errorCode, totalBytes: d.totalBytes ?? -1n, usableBytes: d.usableBytes ?? -1n }));
  } catch (e) {
    return asError(e);
  }
}

/** Every group any live broker coordinates (ListGroups answers only a broker's own); a broker that fails is noted in `errors`. */
async function listGroups(client: ClusterClient, brokers: number[], errors: string[]): Promise<string[]> {
  const groups = new Set<string>();
  for (const id of brokers) {
    try {
      const conn = await client.broker(id);
      const r = await conn.send(ApiKey.ListGroups, conn.version(ApiKey.ListGroups, 5), { statesFilter: [], typesFilter: [] });
      if (r.errorCode !== 0) throw new KafkaError(r.errorCode);
      for (const g of r.groups) groups.add(g.groupId);
    } catch (e) {
      errors.push(`groups on broker ${id}: ${failed(asError(e))}`);
    }
  }
  return [...groups].sort();
}

/** A group's lag now: the log end offsets minus its committed offsets, summed over its partitions. */
async function groupLag(client: ClusterClient, group: string): Promise<bigint> {
  const committed = await committedOffsets(await coordinatorFor(client, group), group);
  const refs: PartitionRef[] = [...committed.values()].map((c) => c.ref);
  const ends = await listOffsets(client, refs, -1n);
  let lag = 0n;
  for (const c of committed.values()) {
    const end = ends.get(partitionKey(c.ref.topic, c.ref.partition)) ?? c.offset;
    if (end > c.offset) lag += end - c.offset;
  }
  return lag;
}

async function sampleLag(client: ClusterClient, brokers: number[], intervalMs: number): Promise<Observed['lag']> {
  const errors: string[] = [];
  const groups = await listGroups(client, brokers, errors);
  const sample = async () => {
    const out = new Map<string, bigint>();
    for (const g of groups) {
      try { out.set(g, await groupLag(client, g)); } catch (e) { if (!errors.some((x) => x.startsWith(`${g}:`))) errors.push(`${g}: ${failed(asError(e))}`); }
    }
    return out;
  };
  const before = await sample();
  await sleep(intervalMs);
  const after = await sample();
  const sampled = groups.filter((g) => before.has(g) && after.has(g)).map((g) => ({ group: g, before: before.get(g)!, after: after.get(g)! }));
  return { intervalMs, groups: sampled, errors };
}

async function nodeOf(address: string): Promise<NodeView> {
  const res = await fetch(`http://${address}/v1/node`, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  return await res.json() as NodeView;
}

export async function gather(client: ClusterClient, httpAddresses: string[], lagIntervalMs: number): Promise<Observed> {
  const topics = await client.metadata(null);
  const liveBrokers = [...client.brokers.keys()].sort((a, b) => a - b);
  let registered: BrokersView | Error = new Error('no HTTP address');
  for (const address of httpAddresses) {
    registered = await fetchBrokers(address).catch(asError);
    if (!(registered instanceof Error)) break;
  }
  const configs = await describeConfigs(client, topics.map((t) => t.name), liveBrokers[0]);
  const quorum = await describeQuorum(client).catch(asError);
  const logDirs = [];
  for (const brokerId of liveBrokers) logDirs.push({ brokerId, dirs: await logDirsOf(client, brokerId), ...await freeSpaceConfigsOf(client, brokerId) });
  const nodes = await Promise.all(httpAddresses.map(async (address) => ({ address, view: await nodeOf(address).catch(asError) })));
  const lag = lagIntervalMs > 0 ? await sampleLag(client, liveBrokers, lagIntervalMs) : null;
  const nodesLater = lag === null ? null : await Promise.all(httpAddresses.map(async (address) => ({ address, view: await nodeOf(address).catch(asError) })));
  return { topics, liveBrokers, registered, ...configs, quorum, logDirs, nodes, nodesLater, lag };
}

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  http: { type: 'string', help: `host:port[,host:port] of the nodes' HTTP APIs: fenced brokers from the first that answers, producers' acks summed over all (default $${HTTP_ENV}, else 127.0.0.1:9644)` },
  'lag-interval-ms': { type: 'number', help: 'time between the two samples of consumer group lag and tiered storage copy lag; 0 skips the checks (default 5000)' },
  'disk-warn-pct': { type: 'number', help: 'warn when a log directory\'s volume is fuller than this many percent (default 80)' },
  'disk-fail-pct': { type: 'number', help: 'fail when it is fuller than this many percent (default 90)' },
  'quorum-fetch-timeout-ms': { type: 'number', help: 'a voter that has not fetched from the quorum leader for this long is down (default 5000)' },
  'remote-copy-lag-segments': { type: 'number', help: 'tiered storage: warn when a topic has more rolled segments not yet copied than this per partition (default 2)' },
};

function nonNegative(flags: Record<string, unknown>, name: string, fallback: number): number {
  const v = flags[name] ?? fallback;
  if (typeof v !== 'number' || !(v >= 0)) throw new UsageError(`--${name}: expected a number ≥ 0, got ${String(v)}`);
  return v;
}

export async function doctorCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  if (flags.help) {
    console.log(helpText('logline doctor [options]', 'Checks a running cluster against the production checklist and prints each item as PASS, WARN or FAIL with why; exit code 1 on any FAIL.', FLAGS));
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`logline doctor: unexpected argument ${positionals[0]}`);
  const thresholds: Thresholds = { diskWarnPct: nonNegative(flags, 'disk-warn-pct', 80), diskFailPct: nonNegative(flags, 'disk-fail-pct', 90), quorumFetchTimeoutMs: nonNegative(flags, 'quorum-fetch-timeout-ms', 5000),
    remoteCopyLagSegmentsPerPartition: nonNegative(flags, 'remote-copy-lag-segments', REMOTE_COPY_LAG_SEGMENTS_PER_PARTITION) };
  const lagIntervalMs = nonNegative(flags, 'lag-interval-ms', 5000);
  const httpAddresses = httpAddress(flags).split(',').map((a) => a.trim()).filter((a) => a !== '');
  const client = new ClusterClient(clientOptions(flags));
  try {
    const checks = judge(await gather(client, httpAddresses, lagIntervalMs), thresholds);
    const count = (s: Status) => checks.filter((c) => c.status === s).length;
    if (flags.json) console.log(toJson({ pass: count('PASS'), warn: count('WARN'), fail: count('FAIL'), checks }));
    else console.log(`${table(checks as unknown as Record<string, unknown>[])}\n\n${count('PASS')} passed, ${plural(count('WARN'), 'warning')}, ${count('FAIL')} failed`);
    return count('FAIL') > 0 ? 1 : 0;
  } finally {
    client.close();
  }
}
