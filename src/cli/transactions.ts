// `logline transactions list|describe|describe-producers|abort`, after kafka-transactions.sh.
// list and describe ask the transaction coordinators (ListTransactions, DescribeTransactions);
// describe-producers asks a partition's leader which producers it tracks and where their open
// transaction starts (DescribeProducers) — how a hanging transaction is found; abort writes an
// ABORT marker for the producer whose open transaction starts at --start-offset (WriteTxnMarkers),
// which releases the last stable offset that transaction held back.
import { ClusterClient, KafkaError } from '../client/index.js';
import { ApiKey } from '../protocol/index.js';
import { partitionName } from '../util/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, bootstrapServers, table, toJson, clientOptions } from './output.js';

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  state: { type: 'string', repeatable: true, help: 'list: only transactions in this state (Ongoing, CompleteCommit, ...)' },
  topic: { type: 'string', help: 'describe-producers, abort: the topic' },
  partition: { type: 'number', help: 'describe-producers: one partition (default all); abort: the partition' },
  'start-offset': { type: 'number', help: 'abort: the first offset of the hanging transaction (see describe-producers)' },
};

const USAGE = 'logline transactions <list|describe|describe-producers|abort> [TRANSACTIONAL_ID] [options]';

export async function transactionsCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  const [verb, ...ids] = positionals;
  if (flags.help || !verb) {
    console.log(helpText(USAGE, 'Inspect transactions and abort a hanging one.', FLAGS));
    return verb || flags.help ? 0 : 2;
  }
  const client = new ClusterClient(clientOptions(flags));
  const print = (rows: Record<string, unknown>[], columns: string[]) => console.log(flags.json ? toJson(rows) : table(rows, columns));
  const topicFlag = () => { const t = flags.topic as string | undefined; if (!t) throw new UsageError(`transactions ${verb} needs --topic`); return t; };
  try {
    switch (verb) {
      case 'list': {
        const conn = await client.any();
        const r = await conn.send(ApiKey.ListTransactions, conn.version(ApiKey.ListTransactions, 1), { stateFilters: (flags.state as string[] | undefined) ?? [], producerIdFilters: [], durationFilter: -1n });
        if (r.errorCode !== 0) throw new KafkaError(r.errorCode);
        print(r.transactionStates.map((t: { transactionalId: string; producerId: bigint; transactionState: string }) => ({ transactionalId: t.transactionalId, producerId: t.producerId, state: t.transactionState })),
          ['transactionalId', 'producerId', 'state']);
        return 0;
      }
      case 'describe': {
        if (ids.length === 0) throw new UsageError('transactions describe needs at least one transactional id');
        const rows = [];
        for (const id of ids) {
          const any = await client.any();
          const found = await any.send(ApiKey.FindCoordinator, any.version(ApiKey.FindCoordinator, 3), { key: id, keyType: 1, coordinatorKeys: [] });
          if (found.errorCode !== 0) throw new KafkaError(found.errorCode, found.errorMessage);
          const coordinator = await client.broker(found.nodeId);
          const r = await coordinator.send(ApiKey.DescribeTransactions, 0, { transactionalIds: [id] });
          const s = r.transactionStates[0];
          if (s.errorCode !== 0) throw new KafkaError(s.errorCode, `transactional id ${id}`);
          rows.push({
            transactionalId: id, coordinator: found.nodeId, producerId: s.producerId, producerEpoch: s.producerEpoch, state: s.transactionState,
            timeoutMs: s.transactionTimeoutMs, startTime: s.transactionStartTimeMs < 0n ? null : new Date(Number(s.transactionStartTimeMs)).toISOString(),
            partitions: s.topics.flatMap((t: { topic: string; partitions: number[] }) => t.partitions.map((p) => partitionName(t.topic, p))),
          });
        }
        print(rows, ['transactionalId', 'coordinator', 'producerId', 'producerEpoch', 'state', 'timeoutMs', 'startTime', 'partitions']);
        return 0;
      }
      case 'describe-producers': {
        const topic = topicFlag();
        const info = await client.topic(topic);
        const partitions = flags.partition !== undefined ? [flags.partition as number] : info.partitions.map((p) => p.partition);
        const rows = [];
        for (const partition of partitions) {
          const r = await (await client.leaderFor(topic, partition)).send(ApiKey.DescribeProducers, 0, { topics: [{ name: topic, partitionIndexes: [partition] }] });
          const p = r.topics[0].partitions[0];
          if (p.errorCode !== 0) throw new KafkaError(p.errorCode, partitionName(topic, partition));
          for (const s of p.activeProducers) {
            rows.push({
              partition, producerId: s.producerId, producerEpoch: s.producerEpoch, lastSequence: s.lastSequence,
              lastTimestamp: s.lastTimestamp < 0n ? null : new Date(Number(s.lastTimestamp)).toISOString(),
              currentTransactionStartOffset: s.currentTxnStartOffset < 0n ? null : s.currentTxnStartOffset,
            });
          }
        }
        print(rows, ['partition', 'producerId', 'producerEpoch', 'lastSequence', 'lastTimestamp', 'currentTransactionStartOffset']);
        return 0;
      }
      case 'abort': {
        const topic = topicFlag();
        const partition = flags.partition as number | undefined;
        const start = flags['start-offset'] as number | undefined;
        if (partition === undefined || start === undefined) throw new UsageError('transactions abort needs --topic, --partition and --start-offset');
        const leader = await client.leaderFor(topic, partition);
        const r = await leader.send(ApiKey.DescribeProducers, 0, { topics: [{ name: topic, partitionIndexes: [partition] }] });
        const p = r.topics[0].partitions[0];
        if (p.errorCode !== 0) throw new KafkaError(p.errorCode, partitionName(topic, partition));
        const s = p.activeProducers.find((x: { currentTxnStartOffset: bigint }) => x.currentTxnStartOffset === BigInt(start));
        if (!s) { console.error(`no open transaction starts at offset ${start} of ${partitionName(topic, partition)}`); return 1; }
        const w = await leader.send(ApiKey.WriteTxnMarkers, leader.version(ApiKey.WriteTxnMarkers, 1), {
          markers: [{ producerId: s.producerId, producerEpoch: s.producerEpoch, transactionResult: false, coordinatorEpoch: s.coordinatorEpoch, topics: [{ name: topic, partitionIndexes: [partition] }] }],
        });
        const code = w.markers[0].topics[0].partitions[0].errorCode;
        if (code !== 0) throw new KafkaError(code, partitionName(topic, partition));
        console.log(flags.json ? toJson({ topic, partition, producerId: s.producerId, aborted: true }) : `aborted the transaction of producer ${s.producerId} starting at ${partitionName(topic, partition)}@${start}`);
        return 0;
      }
      default:
        throw new UsageError(`unknown verb "${verb}"; expected list, describe, describe-producers or abort`);
    }
  } finally {
    client.close();
  }
}
