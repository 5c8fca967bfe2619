// `logline consume`: read a topic's partitions from the beginning, the end, an offset or a time,
// and print records as text, JSON lines or raw values. Without --follow it stops once it has
// read up to the high watermark it saw at the start (like `kcat -e`). With --share-group it is a
// share consumer (KIP-932, share-consumer.ts): it takes the records the group's share-partitions
// hand it, acknowledges each (accept, or --reject / --release by value), and stops after --count
// records, or without it once a poll brings nothing.
import { ClusterClient, KafkaError, type BrokerConnection } from '../client/index.js';
import { ApiKey, ErrorCode } from '../protocol/index.js';
import { iterateBatches, decompressBatchBody, forEachRecord } from '../records/index.js';
import { Progress } from './progress.js';
import { ACCEPT, REJECT, RELEASE, ShareConsumer } from './share-consumer.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, bootstrapServers, clientOptions } from './output.js';

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  topic: { type: 'string', help: 'topic to read (required)' },
  partition: { type: 'number', help: 'read only this partition' },
  from: { type: 'string', help: 'beginning (default), end, an offset, or a time (ISO 8601 or epoch ms, prefixed @)' },
  count: { type: 'number', help: 'stop after this many records' },
  format: { type: 'string', help: 'text (key<TAB>value, default), json (one object per line) or raw (values only)' },
  follow: { type: 'boolean', help: 'keep waiting for new records' },
  headers: { type: 'boolean', help: 'text format: a third column with the headers (key=value,...)' },
  'share-group': { type: 'string', help: 'consume as a member of this share group (KIP-932): records are acquired, then acknowledged' },
  reject: { type: 'string', repeatable: true, help: 'share group: reject records with this value (archived, or to the dead-letter topic) instead of accepting them' },
  release: { type: 'string', repeatable: true, help: 'share group: release records with this value (delivered again) instead of accepting them' },
};

const headerText = (headers: { key: string; value: Buffer | null }[]) => headers.map((h) => `${h.key}=${h.value?.toString() ?? ''}`).join(',');

interface Cursor { partition: number; offset: bigint; end: bigint }

async function startOffset(conn: BrokerConnection, topic: string, partition: number, from: string): Promise<bigint> {
  let timestamp: bigint;
  if (from === 'beginning') timestamp = -2n;
  else if (from === 'end') timestamp = -1n;
  else if (/^\d+$/.test(from)) return BigInt(from);
  else if (from.startsWith('@')) {
    const text = from.slice(1);
    const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
    if (!Number.isFinite(ms)) throw new UsageError(`--from @${text} is not a time`);
    timestamp = BigInt(ms);
  } else throw new UsageError(`--from must be beginning, end, an offset or @time, got "${from}"`);
  const r = await conn.send(ApiKey.ListOffsets, conn.version(ApiKey.ListOffsets, 7), {
    replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp, maxNumOffsets: 1 }] }],
  });
  const p = r.topics[0].partitions[0];
  if (p.errorCode !== 0) throw new KafkaError(p.errorCode);
  return p.offset < 0n ? -1n : p.offset;
}

export async function consumeCommand(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv, FLAGS);
  if (flags.help) { console.log(helpText('logline consume --topic T [options]', 'Print records of a topic.', FLAGS)); return 0; }
  const topic = flags.topic as string | undefined;
  if (!topic) throw new UsageError('--topic is required');
  const format = (flags.format as string) ?? (flags.json ? 'json' : 'text');
  if (!['text', 'json', 'raw'].includes(format)) throw new UsageError('--format must be text, json or raw');
  const count = flags.count as number | undefined;
  const client = new ClusterClient(clientOptions(flags));
  if (flags['share-group'] !== undefined) {
    try {
      return await consumeShared(client, topic, flags['share-group'] as string, format, flags);
    } finally {
      client.close();
    }
  }
  let printed = 0;
  try {
    const meta = flags.follow ? await topicWhenItExists(client, topic) : await client.topic(topic);
    const partitions = flags.partition !== undefined ? [flags.partition as number] : meta.partitions.map((p) => p.partition);
    const cursors: Cursor[] = [];
    for (const partition of partitions) {
      const conn = await client.leaderFor(topic, partition);
      const offset = await startOffset(conn, topic, partition, (flags.from as string) ?? 'beginning');
      const end = await startOffset(conn, topic, partition, 'end');
      if (offset >= 0n) cursors.push({ partition, offset, end });
    }
    const out = process.stdout;
    // Records written to a terminal are their own progress; written to a file or a pipe, a big
    // consume shows how far it is on stderr (the records up to the end offsets seen at the start).
    const remaining = cursors.reduce((n, c) => n + Number(c.end - c.offset), 0);
    const total = count !== undefined ? (flags.follow ? count : Math.min(count, remaining)) : (flags.follow ? null : remaining);
    const bar = out.isTTY ? null : new Progress({ label: `consume ${topic}`, total, unit: 'records' });
    while (cursors.length > 0 && (count === undefined || printed < count)) {
      let progressed = false;
      for (const c of [...cursors]) {
        if (!flags.follow && c.offset >= c.end) { cursors.splice(cursors.indexOf(c), 1); continue; }
        const conn = await client.leaderFor(topic, c.partition);
        const r = await conn.send(ApiKey.Fetch, conn.version(ApiKey.Fetch, 11), {
          replicaId: -1, maxWaitMs: flags.follow ? 500 : 100, minBytes: 1, maxBytes: 52428800, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
          topics: [{ topic, partitions: [{ partition: c.partition, currentLeaderEpoch: -1, fetchOffset: c.offset, logStartOffset: -1n, partitionMaxBytes: 1048576 }] }],
          forgottenTopicsData: [], rackId: '',
        });
        const p = r.responses[0]?.partitions[0];
        if (!p) continue;
        if (p.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) { c.offset = p.logStartOffset; continue; }
        if (p.errorCode !== 0) throw new KafkaError(p.errorCode);
        if (!p.records) continue;
        for (const batch of iterateBatches(p.records, { allowPartialTail: true })) {
          if (batch.isControl) { c.offset = BigInt(batch.lastOffset + 1); continue; }
          const body = await decompressBatchBody(batch);
          forEachRecord(batch, body, (rec) => {
            if (BigInt(rec.offset) < c.offset || (count !== undefined && printed >= count)) return;
            const value = rec.value();
            const key = rec.key();
            if (format === 'raw') out.write(value ? Buffer.concat([value, Buffer.from('\n')]) : '\n');
            else if (format === 'json') {
              out.write(`${JSON.stringify({ partition: c.partition, offset: rec.offset, timestamp: rec.timestamp, key: key?.toString() ?? null, value: value?.toString() ?? null, headers: Object.fromEntries(rec.headers().map((h) => [h.key, h.value?.toString() ?? null])) })}\n`);
            } else out.write(`${key?.toString() ?? ''}\t${value?.toString() ?? ''}${flags.headers ? `\t${headerText(rec.headers())}` : ''}\n`);
            printed++;
          });
          c.offset = BigInt(batch.lastOffset + 1);
          progressed = true;
        }
      }
      bar?.update(printed);
      if (!progressed && !flags.follow) break;
    }
    bar?.finish(printed);
    return 0;
  } finally {
    client.close();
  }
}

/**
 * --follow on a topic that does not exist yet waits for it (as kafka-console-consumer keeps
 * polling), saying so once on stderr: a mirrored or linked topic appears on its own.
 */
async function topicWhenItExists(client: ClusterClient, topic: string): ReturnType<ClusterClient['topic']> {
  let told = false;
  for (;;) {
    try {
      return await client.topic(topic);
    } catch (e) {
      if (!(e instanceof KafkaError) || e.errorCode !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) throw e;
      if (!told) { process.stderr.write(`waiting for topic ${topic} to exist\n`); told = true; }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** `consume --share-group`: one share consumer until --count records are handled, or a poll brings none (without --follow). */
async function consumeShared(client: ClusterClient, topic: string, group: string, format: string, flags: Record<string, unknown>): Promise<number> {
  const count = flags.count as number | undefined;
  const rejects = new Set((flags.reject as string[] | undefined) ?? []);
  const releases = new Set((flags.release as string[] | undefined) ?? []);
  const consumer = new ShareConsumer(client, group, [topic]);
  const out = process.stdout;
  let handled = 0;
  try {
    await consumer.subscribe();
    while (count === undefined || handled < count) {
      const records = await consumer.poll(1000);
      if (records.length === 0 && count === undefined && !flags.follow) break;
      for (const r of records) {
        // Records past --count are not acknowledged: closing releases them for the group's other members.
        if (count !== undefined && handled >= count) break;
        const value = r.value?.toString() ?? null;
        const type = value !== null && rejects.has(value) ? REJECT : value !== null && releases.has(value) ? RELEASE : ACCEPT;
        consumer.acknowledge(r, type);
        handled++;
        const ack = type === REJECT ? 'reject' : type === RELEASE ? 'release' : 'accept';
        if (format === 'raw') out.write(r.value ? Buffer.concat([r.value, Buffer.from('\n')]) : '\n');
        else if (format === 'json') {
          out.write(`${JSON.stringify({ partition: r.partition, offset: r.offset, deliveryCount: r.deliveryCount, acknowledgement: ack, timestamp: r.timestamp, key: r.key?.toString() ?? null, value, headers: Object.fromEntries(r.headers.map((h) => [h.key, h.value?.toString() ?? null])) })}\n`);
        } else out.write(`${r.key?.toString() ?? ''}\t${value ?? ''}${flags.headers ? `\t${headerText(r.headers)}` : ''}\n`);
      }
    }
  } finally {
    await consumer.close();
  }
  return 0;
}
