// Produce (key 0), v0-11. Kafka 4.0's floor is v3, but librdkafka (2.0 here) enables gzip and
// snappy only when Produce/Fetch v0-2 are listed (its feature map), so we advertise them: they
// carry the same RecordBatch v2 bytes, and legacy magic 0/1 sets are refused by validation
// (CORRUPT_MESSAGE), so no legacy format is ever stored. kafkajs sends v7, librdkafka v7-9.
// Each partition's batches go to the replica manager as the bytes the client sent; it validates,
// appends and, for acks=all, waits for the high watermark. acks=0 gets no response at all.
// Handler-level checks: acks outside {-1, 0, 1} → INVALID_REQUIRED_ACKS; zstd batches on a
// version below 7 → UNSUPPORTED_COMPRESSION_TYPE (the client could not have negotiated zstd);
// null records → CORRUPT_MESSAGE. Per-partition errors are codes in the response, never throws.
import { ErrorCode, type ProduceRequest } from '../../protocol/index.js';
import { ATTR_COMPRESSION_MASK, BatchHeaderAt, Compression, LOG_OVERHEAD_BYTES, RECORD_BATCH_HEADER_BYTES } from '../../records/index.js';
import { partitionKey } from '../../util/index.js';
import type { HandlerSpec } from '../context.js';
import { produceFailure, type PartitionProduceResult, type ProduceEntry, type ProducePartitionsParams } from '../services.js';

const ZSTD_MIN_PRODUCE_VERSION = 7;

export interface ProduceServices {
  /** Each partition's result, keyed by partitionKey(topic, partition). */
  producePartitions(params: ProducePartitionsParams): Promise<Map<string, PartitionProduceResult>>;
}

/** Whether any batch in `records` is zstd-compressed (walks batch headers only). */
function hasZstd(records: Buffer): boolean {
  for (let pos = 0; pos + RECORD_BATCH_HEADER_BYTES <= records.length;) {
    if ((records.readInt16BE(pos + BatchHeaderAt.Attributes) & ATTR_COMPRESSION_MASK) === Compression.Zstd) return true;
    const len = records.readInt32BE(pos + BatchHeaderAt.BatchLength);
    if (len <= 0) return false;
    pos += LOG_OVERHEAD_BYTES + len;
  }
  return false;
}

export const produceHandler: HandlerSpec<ProduceServices> = {
  apiKey: 0,
  minVersion: 0,
  maxVersion: 11,
  // The replica manager has written (or copied) every batch when producePartitions resolves.
  requestBytesDoneOnResolve: true,
  async handle(request: ProduceRequest, ctx) {
    const early = new Map<string, PartitionProduceResult>();
    const entries: ProduceEntry[] = [];
    const seen = new Set<string>();
    for (const t of request.topicData) {
      for (const p of t.partitionData) {
        const key = partitionKey(t.name, p.index);
        const duplicate = seen.has(key);
        seen.add(key);
        if (duplicate) {
          early.set(key, produceFailure(ErrorCode.INVALID_REQUEST, 'partition listed twice'));
        } else if (request.acks !== 0 && request.acks !== 1 && request.acks !== -1) {
          early.set(key, produceFailure(ErrorCode.INVALID_REQUIRED_ACKS));
        } else if (p.records === null || p.records.length === 0) {
          early.set(key, produceFailure(ErrorCode.CORRUPT_MESSAGE, 'no record batches'));
        } else if (ctx.apiVersion < ZSTD_MIN_PRODUCE_VERSION && hasZstd(p.records)) {
          early.set(key, produceFailure(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, `zstd needs Produce v${ZSTD_MIN_PRODUCE_VERSION} or later`));
        } else {
          entries.push({ topic: t.name, partition: p.index, records: p.records });
        }
      }
    }
    const results = entries.length > 0
      ? await ctx.services.producePartitions({ acks: request.acks, timeoutMs: request.timeoutMs, transactionalId: request.transactionalId, entries })
      : new Map<string, PartitionProduceResult>();
    if (request.acks === 0) return null;
    return {
      throttleTimeMs: 0,
      responses: request.topicData.map((t) => ({
        name: t.name,
        partitionResponses: t.partitionData.map((p) => {
          const key = partitionKey(t.name, p.index);
          const r = early.get(key) ?? results.get(key) ?? produceFailure(ErrorCode.UNKNOWN_SERVER_ERROR);
          return { index: p.index, ...r };
        }),
      })),
    };
  },
};
