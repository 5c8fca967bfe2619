// Produce (key 0), v0-12. Kafka 4.0's floor is v3, but librdkafka (2.0 here) enables gzip and
// snappy only when Produce/Fetch v0-2 are listed (its feature map), so we advertise them. v0-2 may
// carry RecordBatch v2 bytes or a legacy magic 0/1 message set, which the replica manager
// up-converts to one RecordBatch v2 (as Kafka 3.x did), so no legacy format is ever stored: that
// is what clients send that never ask ApiVersions (librdkafka with api.version.request=false and
// broker.version.fallback below 0.10, kafka-python with api_version below (0, 11)). From v3 a
// legacy set is refused by validation (UNSUPPORTED_FOR_MESSAGE_FORMAT). kafkajs sends v7,
// librdkafka v7-9. From v12 (transaction version 2, KIP-890 part 2) the leader adds a
// transactional batch's partition to the transaction itself.
// Each partition's batches go to the replica manager as the bytes the client sent; it validates,
// appends and, for acks=all, waits for the high watermark. acks=0 gets no response at all.
// Handler-level checks: acks outside {-1, 0, 1} → INVALID_REQUIRED_ACKS; zstd batches on a
// version below 7 → UNSUPPORTED_COMPRESSION_TYPE (the client could not have negotiated zstd);
// null records → CORRUPT_MESSAGE; a partition whose log directory is below log.dir.min.free.bytes
// → NOT_ENOUGH_REPLICAS with the disk's reason (retriable; only clients' produce comes through
// here: the coordinators' writes and transaction markers do not). Per-partition errors are codes in
// the response, never throws.
// Transactional batches are checked with the transaction coordinator (KIP-890): up to v11 each
// partition must already be in the transaction; v12 (transaction version 2, same body as v11) adds
// it to the transaction instead of the client sending AddPartitionsToTxn. A partition the
// coordinator calls TRANSACTION_ABORTABLE answers so from v11 (the version that added that error);
// up to v10 it answers INVALID_TXN_STATE, which older clients know (Kafka's
// produceRequestVersionToTransactionSupportedOperation: DEFAULT_ERROR up to v10).
import { ErrorCode, type ProduceRequest } from '../../protocol/index.js';
import { Compression, isLegacyMessageSet, recordBatchAt } from '../../records/index.js';
import { partitionKey } from '../../util/index.js';
import type { HandlerSpec } from '../context.js';
import { produceFailure, type PartitionProduceResult, type ProduceEntry, type ProducePartitionsParams } from '../services.js';

const ZSTD_MIN_PRODUCE_VERSION = 7;
/** The last Produce version that may carry legacy message sets. */
const LEGACY_MAX_PRODUCE_VERSION = 2;
/** From v12 the leader adds a transactional batch's partition to the transaction (Kafka's produceRequestVersionToTransactionSupportedOperation). */
const ADD_TO_TRANSACTION_MIN_PRODUCE_VERSION = 12;
/** From v11 TRANSACTION_ABORTABLE is answered as such (KIP-890 part 1, GENERIC_ERROR_SUPPORTED in Kafka). */
const TRANSACTION_ABORTABLE_MIN_PRODUCE_VERSION = 11;

export interface ProduceServices {
  /** Each partition's result, keyed by partitionKey(topic, partition). */
  producePartitions(params: ProducePartitionsParams): Promise<Map<string, PartitionProduceResult>>;
  /**
   * Why a partition's records (`bytes` of them) are refused before the log: its log directory is
   * below log.dir.min.free.bytes. Null (or absent): go ahead.
   */
  produceRefusal?(topic: string, partition: number, bytes: number): string | null;
}

/** Whether any batch in `records` is zstd-compressed (walks RecordBatch v2 headers only; validation answers the rest). */
function hasZstd(records: Buffer): boolean {
  for (let batch = recordBatchAt(records); batch !== null;) {
    if (batch.compression === Compression.Zstd) return true;
    if (batch.batchLength <= 0) return false;
    batch = recordBatchAt(records, batch.offset + batch.sizeInBytes);
  }
  return false;
}

export const produceHandler: HandlerSpec<ProduceServices, 0> = {
  apiKey: 0,
  minVersion: 0,
  maxVersion: 12,
  // The replica manager has written (or copied) every batch when producePartitions resolves.
  requestBytesDoneOnResolve: true,
  async handle(request: ProduceRequest, ctx) {
    const early = new Map<string, PartitionProduceResult>();
    const entries: ProduceEntry[] = [];
    const seen = new Set<string>();
    let refusal: string | null;
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
        } else if ((refusal = ctx.services.produceRefusal?.(t.name, p.index, p.records.length) ?? null) !== null) {
          // Below the free-space floor: NOT_ENOUGH_REPLICAS ("rejected, not written"), the error every
          // client here retries: librdkafka as retry + not persisted, kafkajs, Java and every
          // kafka-python as retriable. KAFKA_STORAGE_ERROR would say "disk" but kafka-python 2.0.2
          // (Debian's) does not know code 56 and fails the send at once. The message says why.
          early.set(key, produceFailure(ErrorCode.NOT_ENOUGH_REPLICAS, refusal));
        } else if (ctx.apiVersion <= LEGACY_MAX_PRODUCE_VERSION && isLegacyMessageSet(p.records)) {
          // Its codec check (zstd is invalid there) comes with the conversion.
          entries.push({ topic: t.name, partition: p.index, records: p.records, legacyMessageSet: true });
        } else if (ctx.apiVersion < ZSTD_MIN_PRODUCE_VERSION && hasZstd(p.records)) {
          early.set(key, produceFailure(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, `zstd needs Produce v${ZSTD_MIN_PRODUCE_VERSION} or later`));
        } else {
          entries.push({ topic: t.name, partition: p.index, records: p.records });
        }
      }
    }
    const results = entries.length > 0
      ? await ctx.services.producePartitions({
        acks: request.acks, timeoutMs: request.timeoutMs, transactionalId: request.transactionalId, entries,
        addToTransaction: ctx.apiVersion >= ADD_TO_TRANSACTION_MIN_PRODUCE_VERSION,
        transactionAbortableSupported: ctx.apiVersion >= TRANSACTION_ABORTABLE_MIN_PRODUCE_VERSION,
      })
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
