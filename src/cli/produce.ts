// `logline produce`: lines from stdin become records (optionally "key<SEP>value"), batched per
// partition. Keyed records go to the partition murmur2 picks (as the Java client does); records
// without a key spread round-robin, one batch at a time. Like a Kafka producer, a batch whose
// partition lost its leader (a broker died, leadership moved) or was refused with a retriable error
// such as NOT_ENOUGH_REPLICAS is sent again, to the leader fresh metadata names, until
// --delivery-timeout-ms has passed (Kafka's delivery.timeout.ms). Retries are not idempotent: a
// batch whose answer was lost may be written twice, as with enable.idempotence=false.
import { createInterface } from 'node:readline';
import { ClientError, ClusterClient, KafkaError, partitionForKey } from '../client/index.js';
import { ApiKey } from '../protocol/index.js';
import { buildRecordBatch, Compression, type RecordInput } from '../records/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, bootstrapServers, toJson, clientOptions } from './output.js';

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  topic: { type: 'string', help: 'topic to write to (required)' },
  partition: { type: 'number', help: 'write every record to this partition' },
  'key-separator': { type: 'string', help: 'split each line into key and value at the first SEP' },
  header: { type: 'string', repeatable: true, help: 'key=value header on every record' },
  compression: { type: 'string', help: 'none, gzip, snappy, lz4 or zstd (default none)' },
  acks: { type: 'string', help: 'all (or -1), 0 or 1 (default all)' },
  'batch-size': { type: 'number', help: 'records per batch (default 1000)' },
  'delivery-timeout-ms': { type: 'number', help: 'give up on a batch whose retriable errors last this long (default 120000, Kafka\'s delivery.timeout.ms)' },
};

const ACKS: Record<string, number> = { all: -1, '-1': -1, '0': 0, '1': 1 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a fresh look at the metadata, or waiting, may cure: a lost leader or connection, too few in-sync replicas. */
function isRetriable(err: unknown): boolean {
  return (err instanceof KafkaError && err.retriable) || (err instanceof ClientError && (err.code === 'CONNECTION' || err.code === 'TIMEOUT'));
}

const CODECS: Record<string, Compression> = { none: Compression.None, gzip: Compression.Gzip, snappy: Compression.Snappy, lz4: Compression.Lz4, zstd: Compression.Zstd };

export async function produceCommand(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv, FLAGS);
  if (flags.help) { console.log(helpText('logline produce --topic T [options] < lines', 'Produce stdin lines as records.', FLAGS)); return 0; }
  const topic = flags.topic as string | undefined;
  if (!topic) throw new UsageError('--topic is required');
  const compression = CODECS[(flags.compression as string) ?? 'none'];
  if (compression === undefined) throw new UsageError(`--compression must be one of ${Object.keys(CODECS).join(', ')}`);
  const acks = ACKS[(flags.acks as string | undefined) ?? 'all'];
  if (acks === undefined) throw new UsageError('--acks must be all, -1, 0 or 1');
  const deliveryTimeoutMs = (flags['delivery-timeout-ms'] as number | undefined) ?? 120_000;
  if (!(deliveryTimeoutMs >= 0)) throw new UsageError('--delivery-timeout-ms must be 0 or more');
  const batchSize = (flags['batch-size'] as number) ?? 1000;
  const sep = flags['key-separator'] as string | undefined;
  const headers = ((flags.header as string[] | undefined) ?? []).map((h) => {
    const eq = h.indexOf('=');
    if (eq <= 0) throw new UsageError(`--header expects key=value, got "${h}"`);
    return { key: h.slice(0, eq), value: Buffer.from(h.slice(eq + 1)) };
  });
  const client = new ClusterClient(clientOptions(flags));
  try {
    // Like Kafka's console producer: the broker may auto-create the topic (auto.create.topics.enable).
    const meta = await client.topic(topic, true);
    const partitionCount = meta.partitions.length;
    const pending = new Map<number, RecordInput[]>();
    let roundRobin = 0;
    let produced = 0;
    const flush = async (partition: number) => {
      const records = pending.get(partition);
      if (!records || records.length === 0) return;
      pending.delete(partition);
      const batch = await buildRecordBatch({ records, compression });
      const body = { transactionalId: null, acks, timeoutMs: 30000, topicData: [{ name: topic, partitionData: [{ index: partition, records: batch }] }] };
      const giveUpAt = Date.now() + deliveryTimeoutMs;
      for (let backoffMs = 100; ; backoffMs = Math.min(backoffMs * 2, 1000)) {
        try {
          const leader = await client.leaderFor(topic, partition);
          const version = leader.version(ApiKey.Produce, 9);
          if (acks === 0) { leader.sendNoResponse(ApiKey.Produce, version, body); break; }
          const p = (await leader.send(ApiKey.Produce, version, body)).responses[0].partitionResponses[0];
          if (p.errorCode !== 0) throw new KafkaError(p.errorCode, p.errorMessage ?? `${topic}-${partition}`);
          break;
        } catch (err) {
          if (!isRetriable(err) || Date.now() + backoffMs > giveUpAt) throw err;
          await sleep(backoffMs);
        }
      }
      produced += records.length;
    };
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    for await (const line of lines) {
      let key: Buffer | null = null;
      let value = line;
      if (sep !== undefined) {
        const at = line.indexOf(sep);
        if (at >= 0) { key = Buffer.from(line.slice(0, at)); value = line.slice(at + sep.length); }
      }
      const partition = (flags.partition as number | undefined) ?? (key ? partitionForKey(key, partitionCount) : roundRobin % partitionCount);
      const list = pending.get(partition) ?? [];
      list.push({ key, value: Buffer.from(value), headers, timestamp: Date.now() });
      pending.set(partition, list);
      if (list.length >= batchSize) {
        await flush(partition);
        roundRobin++;
      }
    }
    for (const p of [...pending.keys()]) await flush(p);
    if (flags.json) console.log(toJson({ topic, produced }));
    else console.error(`produced ${produced} record(s) to ${topic}`);
    return 0;
  } finally {
    client.close();
  }
}
