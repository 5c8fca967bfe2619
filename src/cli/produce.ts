// `logline produce`: lines from stdin become records (optionally "key<SEP>value"), batched per
// partition. Keyed records go to the partition murmur2 picks (as the Java client does); records
// without a key spread round-robin, one batch at a time.
import { createInterface } from 'node:readline';
import { ClusterClient, KafkaError, partitionForKey } from '../client/index.js';
import { ApiKey } from '../protocol/index.js';
import { buildRecordBatch, Compression, type RecordInput } from '../records/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, bootstrapServers, toJson } from './output.js';

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  topic: { type: 'string', help: 'topic to write to (required)' },
  partition: { type: 'number', help: 'write every record to this partition' },
  'key-separator': { type: 'string', help: 'split each line into key and value at the first SEP' },
  header: { type: 'string', repeatable: true, help: 'key=value header on every record' },
  compression: { type: 'string', help: 'none, gzip, snappy, lz4 or zstd (default none)' },
  acks: { type: 'number', help: '-1 (all), 0 or 1 (default -1)' },
  'batch-size': { type: 'number', help: 'records per batch (default 1000)' },
};

const CODECS: Record<string, Compression> = { none: Compression.None, gzip: Compression.Gzip, snappy: Compression.Snappy, lz4: Compression.Lz4, zstd: Compression.Zstd };

export async function produceCommand(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv, FLAGS);
  if (flags.help) { console.log(helpText('logline produce --topic T [options] < lines', 'Produce stdin lines as records.', FLAGS)); return 0; }
  const topic = flags.topic as string | undefined;
  if (!topic) throw new UsageError('--topic is required');
  const compression = CODECS[(flags.compression as string) ?? 'none'];
  if (compression === undefined) throw new UsageError(`--compression must be one of ${Object.keys(CODECS).join(', ')}`);
  const acks = (flags.acks as number) ?? -1;
  if (![-1, 0, 1].includes(acks)) throw new UsageError('--acks must be -1, 0 or 1');
  const batchSize = (flags['batch-size'] as number) ?? 1000;
  const sep = flags['key-separator'] as string | undefined;
  const headers = ((flags.header as string[] | undefined) ?? []).map((h) => {
    const eq = h.indexOf('=');
    if (eq <= 0) throw new UsageError(`--header expects key=value, got "${h}"`);
    return { key: h.slice(0, eq), value: Buffer.from(h.slice(eq + 1)) };
  });
  const client = new ClusterClient({ bootstrap: bootstrapServers(flags) });
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
      const leader = await client.leaderFor(topic, partition);
      const body = { transactionalId: null, acks, timeoutMs: 30000, topicData: [{ name: topic, partitionData: [{ index: partition, records: batch }] }] };
      const version = leader.version(ApiKey.Produce, 9);
      if (acks === 0) { leader.sendNoResponse(ApiKey.Produce, version, body); produced += records.length; return; }
      const r = await leader.send(ApiKey.Produce, version, body);
      const p = r.responses[0].partitionResponses[0];
      if (p.errorCode !== 0) throw new KafkaError(p.errorCode, p.errorMessage);
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
