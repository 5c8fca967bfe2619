// The shared half of the replication fault runs (cluster-kills, cluster-netcuts): a topic with
// RF 3 and min.insync.replicas 2 on three `logline server` processes, two idempotent acks=all
// producers at a steady rate (librdkafka through confluent-kafka-python, and kafkajs) that record
// every acknowledged (partition, offset, value), and the checks once the faults are over: every
// acknowledged record is read back at its offset, no value twice, and a consumer group reads it all.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Producer, type RecordMetadata } from 'kafkajs';
import { ClusterClient, type PartitionInfo } from '../../src/client/index.js';
import { ApiKey, ErrorCode, type DescribeProducersResponse } from '../../src/protocol/index.js';
import { decompressBatchBody, iterateBatches, iterateRecords } from '../../src/records/index.js';
import { consumeAll } from './log-reader.js';
import { activeControllerOn, killProcess, runProcess, startClusterNodeProcess, within, type ClusterNodeProcess } from './process-helpers.js';

export const PYTHON = '/usr/bin/python3';
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Node settings for fault runs: short broker sessions and replica lag so a dead or cut-off broker
 * leaves the ISR within seconds rather than Kafka's 9 s / 30 s, and replicated internal topics.
 */
export const FAULT_NODE_SETTINGS = [
  'broker.session.timeout.ms=3000', 'broker.heartbeat.interval.ms=500', 'replica.lag.time.max.ms=5000',
  'offsets.topic.replication.factor=3', 'group.initial.rebalance.delay.ms=0',
];

/** One acknowledged record: where the producer was told it was written. */
/** `o` is null when the client acknowledged the record without its offset (librdkafka's implied acks). */
export interface Ack { p: number; o: number | null; v: string }

/** What a producer reports at the end: its acknowledged records and the sends it was told failed. */
export interface ProducerResult { acks: Ack[]; failures: string[]; sent: number }

const brokerAddress = (n: ClusterNodeProcess) => `${n.host ?? '127.0.0.1'}:${n.brokerPort}`;
export const bootstrapOf = (nodes: ClusterNodeProcess[]) => nodes.map(brokerAddress).join(',');

/** CreateTopics through any live node, retried while no controller is known or the node is down. */
export async function createFaultTopic(nodes: ClusterNodeProcess[], name: string, partitions: number): Promise<void> {
  await within(30_000, `creation of ${name}`, (async () => {
    for (;;) {
      const client = new ClusterClient({ bootstrap: bootstrapOf(nodes), requestTimeoutMs: 5000 });
      try {
        const r = await client.admin(ApiKey.CreateTopics, {
          topics: [{ name, numPartitions: partitions, replicationFactor: 3, assignments: [], configs: [{ name: 'min.insync.replicas', value: '2' }] }],
          timeoutMs: 10_000, validateOnly: false,
        }, 7);
        const code = r.topics[0].errorCode;
        if (code === ErrorCode.NONE || code === ErrorCode.TOPIC_ALREADY_EXISTS) return;
        assert.equal(code, ErrorCode.NOT_CONTROLLER, r.topics[0].errorMessage);
      } catch (e) {
        if (e instanceof assert.AssertionError) throw e;
      } finally {
        client.close();
      }
      await sleep(100);
    }
  })());
}

/** The partitions of `topic` as the broker on `node` reports them, or null when it does not answer. */
export async function partitionsOn(node: ClusterNodeProcess, topic: string): Promise<PartitionInfo[] | null> {
  const client = new ClusterClient({ bootstrap: brokerAddress(node), requestTimeoutMs: 3000 });
  try {
    const [t] = await client.metadata([topic]);
    return t === undefined || t.errorCode !== 0 ? null : t.partitions;
  } catch {
    return null;
  } finally {
    client.close();
  }
}

/** The running node that leads `partition` of `topic`, as the first answering running node says (polled for up to 30 s). */
export async function liveLeaderOf(nodes: ClusterNodeProcess[], topic: string, partition: number): Promise<ClusterNodeProcess> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    for (const n of nodes) {
      if (n.child === null) continue;
      const leader = (await partitionsOn(n, topic))?.find((p) => p.partition === partition)?.leader;
      const found = nodes.find((x) => x.id === leader && x.child !== null);
      if (found !== undefined) return found;
    }
    await sleep(100);
  }
  throw new Error(`no running leader of ${topic}-${partition} known in 30000 ms`);
}

/**
 * Waits until every live node reports every partition of `topic` led with all three replicas in its
 * ISR; a partition that stays offline or an ISR that never expands fails the test with what the
 * nodes last reported.
 */
export async function untilFullIsr(nodes: ClusterNodeProcess[], topic: string, timeoutMs: number, what: string): Promise<PartitionInfo[]> {
  let last: (PartitionInfo[] | null)[] = [];
  const started = Date.now();
  for (;;) {
    last = await Promise.all(nodes.map((n) => partitionsOn(n, topic)));
    const full = (ps: PartitionInfo[] | null) => ps !== null && ps.length > 0 && ps.every((p) => p.leader >= 0 && p.isr.length === 3);
    if (last.every(full) && last.every((ps) => JSON.stringify(ps!.map((p) => [p.leader, p.leaderEpoch])) === JSON.stringify(last[0]!.map((p) => [p.leader, p.leaderEpoch])))) return last[0]!;
    if (Date.now() - started > timeoutMs) {
      const view = last.map((ps, i) => `node ${nodes[i]!.id}: ${ps === null ? 'no answer' : ps.map((p) => `p${p.partition} leader ${p.leader} epoch ${p.leaderEpoch} isr [${p.isr}]`).join('; ')}`);
      throw new Error(`${what}: ${topic} not fully replicated after ${timeoutMs} ms\n${view.join('\n')}`);
    }
    await sleep(200);
  }
}

/**
 * A producer running in the background: `stop` ends it cleanly and returns what it saw, `abort` just
 * ends it (a failing test's cleanup); `stuckReport`, when it has one, says what the client itself
 * was doing, for a failure that names it stuck.
 */
export interface FaultProducer { acked(): number; ackedOn(partition: number): number; failed(): number; stop(): Promise<ProducerResult>; abort(): void; stuckReport?(): string }

/**
 * Waits until each of `producers` has had a record acknowledged since the call (in `partition`
 * when given); when one has not
 * within a minute, fails naming which and with what every node reports about `topic`.
 */
export async function untilAcked(nodes: ClusterNodeProcess[], topic: string, producers: Record<string, FaultProducer>, what: string, partition?: number): Promise<string> {
  const entries = Object.entries(producers);
  const count = (p: FaultProducer) => (partition === undefined ? p.acked() : p.ackedOn(partition));
  const before = entries.map(([, p]) => count(p));
  const started = Date.now();
  const tookMs = new Map<string, number>();
  for (;;) {
    for (const [i, [name, p]] of entries.entries()) if (!tookMs.has(name) && count(p) > before[i]!) tookMs.set(name, Date.now() - started);
    const stuck = entries.filter(([name]) => !tookMs.has(name)).map(([name]) => name);
    if (stuck.length === 0) return [...tookMs].map(([name, ms]) => `${name} ${ms} ms`).join(', ');
    if (Date.now() - started > 60_000) {
      const views = await Promise.all(nodes.map(async (n) => `node ${n.id}: ${(await partitionsOn(n, topic))?.map((p) => `p${p.partition} leader ${p.leader} epoch ${p.leaderEpoch} isr [${p.isr}]`).join('; ') ?? 'no answer'}`));
      const reports = entries.filter(([name]) => stuck.includes(name)).map(([name, p]) => p.stuckReport === undefined ? '' : `\n${name}: ${p.stuckReport()}`);
      throw new Error(`${what}: nothing acknowledged to ${stuck.join(', ')} in 60 s\n${views.join('\n')}${reports.join('')}`);
    }
    await sleep(50);
  }
}

/** What the broker on `node` holds of each producer in `partitions` of `topic` (the leader answers; others say NOT_LEADER), for a failure message. */
async function producersOn(node: ClusterNodeProcess, topic: string, partitions: number[]): Promise<string> {
  const client = new ClusterClient({ bootstrap: brokerAddress(node), requestTimeoutMs: 3000 });
  try {
    const r = await client.admin<DescribeProducersResponse>(ApiKey.DescribeProducers, { topics: [{ name: topic, partitionIndexes: partitions }] }, 0);
    return r.topics.flatMap((t) => t.partitions).map((p) => `p${p.partitionIndex} ${p.errorCode !== 0 ? `error ${p.errorCode}`
      : p.activeProducers.map((x) => `producer ${x.producerId} epoch ${x.producerEpoch} last sequence ${x.lastSequence}`).join(', ') || 'none'}`).join('; ');
  } catch (e) {
    return `no answer (${(e as Error).message})`;
  } finally {
    client.close();
  }
}

/** Writes each node's output to a file under the temporary directory (for a failed run) and names the files. */
export function dumpLogs(nodes: ClusterNodeProcess[], topic: string): string {
  return nodes.map((n) => {
    const path = join(tmpdir(), `logline-faults-${topic}-${n.netns === undefined ? '' : `${n.netns}-`}node-${n.id}.log`);
    writeFileSync(path, n.log);
    return path;
  }).join(' ');
}

/** A record librdkafka had not reported on after the flush: its partition (null: never assigned one), value, produce time (ms) and purge error. */
interface Pending { p: number | null; v: string; t: number; e: string }

/** confluent-kafka-python (librdkafka) producing `rate` records a second until `stop()` is called. */
export function startLibrdkafkaProducer(nodes: ClusterNodeProcess[], topic: string, rate: number): FaultProducer {
  const dir = mkdtempSync(join(tmpdir(), 'logline-faults-'));
  const stopFile = join(dir, 'stop');
  // librdkafka's debug log, read only when records are left undelivered (then kept).
  const debugFile = join(dir, 'librdkafka-debug.log');
  const child = spawn(PYTHON, ['test/broker/python/acked_producer.py', bootstrapOf(nodes), topic, 'py', String(rate), stopFile, debugFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  const result: ProducerResult = { acks: [], failures: [], sent: -1 };
  const pending: Pending[] = [];
  let partial = '';
  let stderr = '';
  let left = -1;
  let reported = false;
  child.stdout!.on('data', (d: Buffer) => {
    partial += d;
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const r = JSON.parse(line) as { p?: number | null; o?: number; v?: string; e?: string; done?: number; left?: number; pending?: string; t?: number };
      if (r.pending !== undefined) pending.push({ p: r.p ?? null, v: r.v!, t: r.t!, e: r.pending });
      else if (r.e !== undefined) result.failures.push(`${r.v} (partition ${r.p ?? 'none'}, produced ${new Date(r.t!).toISOString()}): ${r.e}`);
      else if (r.done !== undefined) { result.sent = r.done; left = r.left!; }
      else result.acks.push({ p: r.p!, o: r.o!, v: r.v! });
    }
  });
  child.stderr!.on('data', (d: Buffer) => { stderr += d; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    acked: () => result.acks.length,
    ackedOn: (p: number) => result.acks.reduce((n, a) => n + (a.p === p ? 1 : 0), 0),
    failed: () => result.failures.length,
    // The report keeps the debug log it names: the cleanup after the failure must not delete it.
    stuckReport: () => {
      reported = true;
      let debug: string[] = [];
      try { debug = readFileSync(debugFile, 'utf8').split('\n'); } catch { /* no debug log written */ }
      const told = debug.filter((l) => l.length > 0 && !l.includes(' PARTITIONER '));
      const exit = child.exitCode !== null || child.signalCode !== null ? `exited (${child.exitCode ?? child.signalCode}): ${stderr.slice(-2000)}` : 'running';
      return [`the python process ${exit}; ${result.acks.length} acknowledged, ${result.failures.length} failed${result.failures.length > 0 ? `, the last: ${result.failures.slice(-3).join('; ')}` : ''}`,
        `librdkafka debug log ${debugFile} (${debug.length} lines), its last lines:`, ...told.slice(-60).map((l) => `  ${l.slice(0, 400)}`)].join('\n');
    },
    // A failed stop's report names the debug log: the cleanup after it must not delete it.
    abort: () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); if (!reported) rmSync(dir, { recursive: true, force: true }); },
    async stop() {
      const stoppedAt = Date.now();
      writeFileSync(stopFile, '');
      const code = await within(220_000, 'the librdkafka producer flushing', exited);
      assert.equal(code, 0, `librdkafka producer exited ${code}: ${stderr.slice(-2000)}`);
      if (left !== 0 || result.failures.length > 0) {
        reported = true;
        assert.fail(await undeliveredReport(nodes, topic, { left, pending, failures: result.failures, acks: result.acks, stoppedAt, debugFile }));
      }
      rmSync(dir, { recursive: true, force: true });
      return result;
    },
  };
}

/**
 * Why librdkafka records were left without a delivery report: which records (partition, value,
 * when produced) the purge after the flush named, the failures and the last acknowledgement per
 * partition, what every node says about those partitions, where the nodes' logs and librdkafka's
 * debug log are, and the debug log's last lines about those partitions.
 */
async function undeliveredReport(nodes: ClusterNodeProcess[], topic: string,
  r: { left: number; pending: Pending[]; failures: string[]; acks: Ack[]; stoppedAt: number; debugFile: string }): Promise<string> {
  const failedPartitions = r.failures.map((f) => /\(partition (\d+),/.exec(f)?.[1]).filter((p) => p !== undefined).map(Number);
  const partitions = [...new Set([...r.pending.map((x) => x.p), ...failedPartitions])].sort((x, y) => (x ?? -1) - (y ?? -1));
  const at = (ms: number) => new Date(ms).toISOString();
  let debug: string[] = [];
  try { debug = readFileSync(r.debugFile, 'utf8').split('\n'); } catch { /* no debug log written */ }
  const lines = [`librdkafka: ${r.left} records without a delivery report in the 180 s flush after the stop at ${at(r.stoppedAt)}, ${r.failures.length} failed`];
  // librdkafka 2.0 (no leader epochs) can end up with a partition delegated to a broker other than
  // the leader it has recorded; it then takes itself for a consumer fetching from a follower and
  // never moves the partition (rd_kafka_toppar_leader_update), retrying NOT_LEADER_OR_FOLLOWER
  // until message.timeout.ms. It logs so on every metadata answer (also, briefly, during an
  // ordinary migration): stuck when it still produces to another broker than that leader.
  for (const p of partitions) {
    const notMoving = debug.filter((l) => l.includes(`${topic} [${p}]: leader `) && l.includes('not migrating away from preferred replica'));
    const leader = notMoving.at(-1)?.match(/leader (-?\d+) unchanged/)?.[1];
    const on = debug.filter((l) => l.includes(`: ${topic} [${p}]: Produce MessageSet`)).at(-1)?.match(/\]: ([^ ]+): /)?.[1];
    if (leader !== undefined && on !== undefined && on.split('/').at(-1) !== leader) {
      lines.push(`  ${topic}-${p}: librdkafka kept producing to ${on} while naming broker ${leader} the leader ("${notMoving.at(-1)!.replace(/^.*\]: /, '')}", ${notMoving.length} times): its delegation is stuck`);
    }
  }
  for (const p of partitions) {
    const recs = r.pending.filter((x) => x.p === p);
    if (recs.length === 0) continue;
    lines.push(`  ${topic}-${p}: ${recs.length} pending (${[...new Set(recs.map((x) => x.e))].join(', ')}), produced ${at(Math.min(...recs.map((x) => x.t)))} .. ${at(Math.max(...recs.map((x) => x.t)))}: ${recs.slice(0, 12).map((x) => x.v).join(' ')}`);
  }
  for (const p of [...new Set(r.acks.map((a) => a.p))].sort((x, y) => x - y)) {
    const last = r.acks.filter((a) => a.p === p).at(-1);
    lines.push(`  ${topic}-${p}: ${r.acks.filter((a) => a.p === p).length} acknowledged, the last ${last === undefined ? 'none' : `${last.v} at offset ${last.o}`}`);
  }
  // A record stuck as long as message.timeout.ms fails rather than staying pending: the failures say where too.
  const failedIn = new Map<string, number>();
  for (const f of r.failures) { const p = /\(partition (\S+?),/.exec(f)?.[1] ?? '?'; failedIn.set(p, (failedIn.get(p) ?? 0) + 1); }
  lines.push(`  ${r.failures.length} failed delivery reports${r.failures.length > 0 ? ` (${[...failedIn].map(([p, n]) => `${n} in partition ${p}`).join(', ')}), first: ${r.failures.slice(0, 3).join('; ')}` : ''}`);
  const named = partitions.filter((p): p is number => p !== null);
  for (const n of nodes) {
    const view = await partitionsOn(n, topic);
    lines.push(`  node ${n.id}${n.child === null ? ' (not running)' : ''}: ${view === null ? 'no answer' : view.map((p) => `p${p.partition} leader ${p.leader} epoch ${p.leaderEpoch} isr [${p.isr}]`).join('; ')}`);
    if (named.length > 0 && n.child !== null) lines.push(`    its producer state (DescribeProducers): ${await producersOn(n, topic, named)}`);
  }
  lines.push(`  node logs: ${dumpLogs(nodes, topic)}`);
  const about = partitions.map((p) => `${topic} [${p}]`);
  // The partitioner names a partition for every record: not what tells why it is stuck.
  const mentions = debug.filter((l) => about.some((a) => l.includes(a)) && !l.includes(' PARTITIONER '));
  lines.push(`  librdkafka debug log: ${r.debugFile} (${debug.length} lines); its last lines about ${about.join(', ')}:`);
  lines.push(...mentions.slice(-40).map((l) => `    ${l.slice(0, 400)}`));
  return lines.join('\n');
}

/**
 * kafkajs (idempotent, acks -1) sending batches of `batch` records to one partition at a time, one
 * send every `intervalMs`. A send that fails is not retried with the same values, and its producer
 * is replaced (a new producer id), so a duplicate can only come from the broker.
 */
export function startKafkajsProducer(nodes: ClusterNodeProcess[], topic: string, partitions: number, batch: number, intervalMs: number): FaultProducer {
  // Short timeouts: a broker cut off from the others still answers clients (and keeps naming itself
  // leader until it hears otherwise), so a long wait on it is time the producer does not write.
  const kafka = new Kafka({ clientId: 'faults', brokers: nodes.map(brokerAddress), logLevel: logLevel.NOTHING, connectionTimeout: 3000, requestTimeout: 8000, retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 } });
  const result: ProducerResult = { acks: [], failures: [], sent: 0 };
  let stopping = false;
  let producer: Producer | null = null;
  const loop = (async () => {
    for (let n = 0; !stopping; n++) {
      const partition = n % partitions;
      const values = Array.from({ length: batch }, (_, i) => `js-${n * batch + i}`);
      try {
        if (producer === null) {
          const fresh = kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 1000 } });
          producer = fresh;
          await fresh.connect();
        }
        const current: Producer = producer;
        result.sent += batch;
        const [md]: RecordMetadata[] = await current.send({ topic, acks: -1, timeout: 5000, messages: values.map((value) => ({ partition, value })) });
        assert.equal(md!.partition, partition);
        values.forEach((v, i) => result.acks.push({ p: partition, o: Number(md!.baseOffset) + i, v }));
      } catch (e) {
        if (e instanceof assert.AssertionError) throw e;
        result.failures.push(`${values[0]}..: ${(e as Error).message}`);
        await producer?.disconnect().catch(() => {});
        producer = null;
      }
      await sleep(intervalMs);
    }
    await producer?.disconnect().catch(() => {});
  })();
  return { acked: () => result.acks.length, ackedOn: (p: number) => result.acks.reduce((n, a) => n + (a.p === p ? 1 : 0), 0), failed: () => result.failures.length,
    stuckReport: () => `${result.sent} records sent, ${result.acks.length} acknowledged; its last failed sends: ${result.failures.slice(-5).join('; ') || 'none'}`,
    abort: () => { stopping = true; void producer?.disconnect().catch(() => {}); }, async stop() { stopping = true; await within(60_000, 'the kafkajs producer stopping', loop); return result; } };
}

/**
 * The checks once the faults are over (every node up, every ISR full): each partition read back
 * from its leader has contiguous offsets; every acknowledged record is at the offset it was
 * acknowledged with; no value is in the topic twice; a consumer group reads every record.
 */
/**
 * A fault run's start: the nodes started, the topic created and every ISR full, a librdkafka and a
 * kafkajs acks=all producer writing (pushed onto `producers`, for the caller's cleanup) until both
 * are acknowledged once.
 */
export async function startFaultRun(nodes: ClusterNodeProcess[], voters: string, topic: string, partitions: number, producers: FaultProducer[]) {
  await Promise.all(nodes.map((n) => startClusterNodeProcess(n, voters, FAULT_NODE_SETTINGS)));
  await createFaultTopic(nodes, topic, partitions);
  const initial = await untilFullIsr(nodes, topic, 30_000, 'after creation');
  const py = startLibrdkafkaProducer(nodes, topic, 100);
  const js = startKafkajsProducer(nodes, topic, partitions, 5, 20);
  producers.push(py, js);
  const untilBothAcked = (what: string) => untilAcked(nodes, topic, { librdkafka: py, kafkajs: js }, what);
  await untilBothAcked('first acknowledgements');
  return { partitions: initial, py, js, untilBothAcked };
}

export async function verifyAcknowledged(t: { diagnostic(m: string): void }, nodes: ClusterNodeProcess[], topic: string, partitions: number, results: Record<string, ProducerResult>): Promise<string[][]> {
  const client = new ClusterClient({ bootstrap: bootstrapOf(nodes), requestTimeoutMs: 10_000 });
  const logs: string[][] = [];
  try {
    for (let p = 0; p < partitions; p++) logs.push(await consumeAll(client, topic, p));
  } finally {
    client.close();
  }
  const where = new Map<string, string>();
  const duplicates: string[] = [];
  logs.forEach((values, p) => values.forEach((v, o) => {
    const seen = where.get(v);
    if (seen !== undefined) duplicates.push(`${v} at ${seen} and ${p}/${o}`);
    where.set(v, `${p}/${o}`);
  }));
  const lost: string[] = [];
  for (const [name, r] of Object.entries(results)) {
    // librdkafka acknowledges an idempotent batch without an offset when a later batch of the same
    // producer was acknowledged after the connection carrying it was lost (an implied ack): such a
    // record must be in its partition, once.
    const unplaced = r.acks.filter((a) => a.o === null);
    for (const a of unplaced) if (where.get(a.v)?.split('/')[0] !== String(a.p)) lost.push(`${name} ${a.v} acknowledged (offset unknown) in partition ${a.p}, found at ${where.get(a.v) ?? 'nowhere'}`);
    if (unplaced.length > 0) t.diagnostic(`${name}: ${unplaced.length} record(s) acknowledged without an offset (implied acks), each found in its partition`);
    for (const a of r.acks) if (a.o !== null && logs[a.p]?.[a.o] !== a.v) lost.push(`${name} ${a.v} acknowledged at ${a.p}/${a.o}, found ${logs[a.p]?.[a.o] ?? 'nothing'} there (and ${where.get(a.v) ?? 'nowhere'} for it)`);
    t.diagnostic(`${name}: ${r.acks.length} acknowledged of ${r.sent} sent, ${r.failures.length} failed${r.failures.length > 0 ? ` (first: ${r.failures[0]})` : ''}`);
  }
  const total = logs.reduce((s, l) => s + l.length, 0);
  t.diagnostic(`${topic}: ${total} records in ${partitions} partitions (${logs.map((l) => l.length).join(', ')})`);
  assert.deepEqual(lost.slice(0, 20), [], `${lost.length} acknowledged records are not where they were acknowledged`);
  assert.deepEqual(duplicates.slice(0, 20), [], `${duplicates.length} values are in the topic twice`);

  const group = await runProcess(PYTHON, ['test/broker/python/group_reader.py', bootstrapOf(nodes), topic, `${topic}-group`, String(total), '60'], null, 90_000);
  assert.equal(group.code, 0, group.stderr);
  const out = JSON.parse(group.stdout) as { records: [number, number, string][]; errors: string[]; committed: Record<string, number> };
  const read = new Map(out.records.map(([p, o, v]) => [v, `${p}/${o}`]));
  assert.equal(read.size, total, `the consumer group read ${read.size} distinct records of ${total} (errors: ${out.errors.slice(0, 5).join('; ')})`);
  for (const [v, at] of read) assert.equal(where.get(v), at, `the group read ${v} at ${at}`);
  for (let p = 0; p < partitions; p++) assert.equal(out.committed[String(p)], logs[p]!.length, `the group committed partition ${p} at its end`);
  return logs;
}

/**
 * Every replica's own files (read once its process has stopped) hold exactly what the leader
 * served: the same value at every offset of every partition, nothing more and nothing less.
 */
export async function verifyReplicaFiles(nodes: ClusterNodeProcess[], topic: string, logs: string[][]): Promise<void> {
  for (const n of nodes) {
    for (const [p, expected] of logs.entries()) {
      const dir = join(n.dir, `${topic}-${p}`);
      const values: string[] = [];
      for (const name of readdirSync(dir).filter((f) => f.endsWith('.log')).sort()) {
        for (const batch of iterateBatches(readFileSync(join(dir, name)))) {
          for (const rec of iterateRecords(batch, await decompressBatchBody(batch))) {
            assert.equal(rec.offset, values.length, `node ${n.id} ${topic}-${p}: offsets are contiguous`);
            values.push(rec.value!.toString());
          }
        }
      }
      assert.equal(values.length, expected.length, `node ${n.id} ${topic}-${p}: ${values.length} records on disk, ${expected.length} served by the leader`);
      const first = values.findIndex((v, o) => v !== expected[o]);
      assert.equal(first, -1, `node ${n.id} ${topic}-${p}: offset ${first} holds ${values[first]}, the leader served ${expected[first]}`);
    }
  }
}

/** Whether confluent-kafka-python is installed for /usr/bin/python3 (a visible skip when not, an error in CI). */
export async function librdkafkaSkip(): Promise<string | false> {
  const r = await runProcess(PYTHON, ['-c', 'import confluent_kafka']);
  if (r.code === 0) return false;
  if (process.env.CI) throw new Error('python3-confluent-kafka is missing in CI');
  return 'python3-confluent-kafka is not installed';
}

/**
 * The end of a fault run: both producers stopped (librdkafka must have delivered everything), every
 * ISR full, every acknowledged record where it was acknowledged, no handler error in any node's
 * log, then the nodes stopped and each node's own segment files compared with what was served.
 */
export async function finishFaultRun(t: { diagnostic(m: string): void }, nodes: ClusterNodeProcess[], topic: string, partitions: number,
  running: { librdkafka: FaultProducer; kafkajs: FaultProducer }, producers: FaultProducer[]): Promise<void> {
  const results = { librdkafka: await running.librdkafka.stop(), kafkajs: await running.kafkajs.stop() };
  producers.length = 0;
  assert.deepEqual(results.librdkafka.failures.slice(0, 10), [], 'librdkafka (180 s message timeout) delivered every record');
  await untilFullIsr(nodes, topic, 60_000, 'at the end');
  const logs = await verifyAcknowledged(t, nodes, topic, partitions, results);
  for (const n of nodes) assert.doesNotMatch(n.log, /(handler|encode) error on API/, `node ${n.id}: no request made a handler throw`);
  for (const n of nodes) { await killProcess(n.child!); n.child = null; }
  await verifyReplicaFiles(nodes, topic, logs);
}

/**
 * A fault test's body run with its cleanup: on a failure the nodes' logs go into the test's output;
 * whatever happened, `beforeKill` (resume paused nodes, close connections) runs, the producers the
 * body started are aborted and every node still running is killed, then `after` (namespaces, proxies).
 */
export async function guardFaultRun(t: { diagnostic(m: string): void }, nodes: ClusterNodeProcess[], topic: string, producers: FaultProducer[],
  body: () => Promise<void>, cleanup: { beforeKill?: () => void; after?: () => Promise<void> } = {}): Promise<void> {
  try {
    await body();
  } catch (e) {
    t.diagnostic(`node logs: ${dumpLogs(nodes, topic)}`);
    throw e;
  } finally {
    cleanup.beforeKill?.();
    for (const p of producers) p.abort();
    await Promise.all(nodes.map((n) => (n.child ? killProcess(n.child) : Promise.resolve())));
    await cleanup.after?.();
  }
}

/** The active controller (the quorum's leader, by DescribeQuorum), retried while none is known. */
export async function controllerOf(nodes: ClusterNodeProcess[]): Promise<number> {
  return within(30_000, 'a known controller', (async () => {
    for (;;) {
      const id = await activeControllerOn(bootstrapOf(nodes), 3000);
      if (id > 0) return id;
      await sleep(100);
    }
  })());
}

/** Waits until every survivor reports each partition in `led` of `topic` led by another node than `victim`. */
export async function untilMoved(survivors: ClusterNodeProcess[], topic: string, victim: ClusterNodeProcess, led: number[], what: string): Promise<void> {
  await within(60_000, what, (async () => {
    for (;;) {
      const views = await Promise.all(survivors.map((n) => partitionsOn(n, topic)));
      if (views.every((ps) => ps !== null && led.every((i) => { const p = ps.find((x) => x.partition === i)!; return p.leader >= 0 && p.leader !== victim.id; }))) return;
      await sleep(200);
    }
  })());
}
