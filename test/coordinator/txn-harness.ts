// A simulated runtime around one transaction coordinator shard: records go through the serde
// (bytes and back) and are replayed, replies are sent, markers are queued for the test to write.
import {
  TransactionCoordinatorShard, defaultTxnConfig, encodeTxnRecord, decodeTxnRecord,
  type TxnCoordinatorConfig, type TxnEffects, type TxnRecord, type MarkerWrite, type InitProducerIdResult, type TopicPartition, type EndTxnResult,
} from '../../src/coordinator/index.js';

export class TxnHarness {
  now = 1_000;
  written: { key: Buffer; value: Buffer | null }[] = [];
  markers: MarkerWrite[] = [];
  nextProducerId = 1000n;
  shard: TransactionCoordinatorShard;
  /** When set, the next append fails with this code. */
  failNextAppend: number | null = null;

  constructor(readonly config: Partial<TxnCoordinatorConfig> = {}, readonly coordinatorEpoch = 5, log: { key: Buffer; value: Buffer | null }[] = []) {
    this.shard = new TransactionCoordinatorShard({ ...defaultTxnConfig, ...config }, coordinatorEpoch, () => this.nextProducerId++);
    for (const r of log) {
      const rec = decodeTxnRecord(r.key, r.value);
      if (rec) this.shard.replay(rec);
      this.written.push(r);
    }
    this.apply(this.shard.onLoaded(this.now));
  }

  /** A new coordinator loading everything written so far (as after a move of the partition). */
  reload(config: Partial<TxnCoordinatorConfig> = this.config): TxnHarness {
    const h = new TxnHarness(config, this.coordinatorEpoch + 1, this.written);
    h.now = this.now;
    h.nextProducerId = this.nextProducerId;
    return h;
  }

  apply(e: TxnEffects): void {
    const failure = e.records.length > 0 ? this.failNextAppend : null;
    if (e.records.length > 0) this.failNextAppend = null;
    if (failure !== null) {
      for (const undo of e.onAppendFailure) undo(failure);
      for (const r of e.replies) r.fail(failure);
      return;
    }
    for (const r of e.records) {
      const bytes = encodeTxnRecord(r, this.shard.config.logValueVersion);
      this.written.push(bytes);
      // Live replay gets the record object (with the in-memory last epoch), as the runtime does.
      this.shard.replay(r);
    }
    for (const r of e.replies) r.send();
    this.markers.push(...e.markers);
  }

  records(): TxnRecord[] { return this.written.map((w) => decodeTxnRecord(w.key, w.value)!); }

  advance(ms: number): void { this.now += ms; this.apply(this.shard.tick(this.now)); }

  init(transactionalId = 't', producerId = -1n, producerEpoch = -1, transactionTimeoutMs = 60_000): InitProducerIdResult {
    let out: InitProducerIdResult | undefined;
    this.apply(this.shard.initProducerId(this.now, { transactionalId, transactionTimeoutMs, producerId, producerEpoch }, (r) => { out = r; }));
    return out!;
  }

  /** `clientTransactionVersion` 2: added for a transaction version 2 client (Produce v12, AddPartitionsToTxn v5). */
  add(p: { producerId: bigint; producerEpoch: number }, partitions: TopicPartition[], transactionalId = 't', clientTransactionVersion = 0): number {
    let code = -1;
    this.apply(this.shard.addPartitionsToTxn(this.now, { transactionalId, ...p, partitions, clientTransactionVersion }, (c) => { code = c; }));
    return code;
  }

  addOffsets(p: { producerId: bigint; producerEpoch: number }, groupId: string, offsetsPartition: number, transactionalId = 't'): number {
    let code = -1;
    this.apply(this.shard.addOffsetsToTxn(this.now, { transactionalId, ...p, groupId, offsetsPartition }, (c) => { code = c; }));
    return code;
  }

  end(p: { producerId: bigint; producerEpoch: number }, commit: boolean, transactionalId = 't'): number {
    return this.endWith(p, commit, transactionalId, 0).errorCode;
  }

  /** EndTxn v5 (transaction version 2): the answer carries the producer id and epoch to continue with. */
  endV2(p: { producerId: bigint; producerEpoch: number }, commit: boolean, transactionalId = 't'): EndTxnResult {
    return this.endWith(p, commit, transactionalId, 2);
  }

  private endWith(p: { producerId: bigint; producerEpoch: number }, commit: boolean, transactionalId: string, clientTransactionVersion: number): EndTxnResult {
    let out: EndTxnResult = { errorCode: -1, producerId: -1n, producerEpoch: -1 };
    this.apply(this.shard.endTxn(this.now, { transactionalId, ...p, commit, clientTransactionVersion }, (errorCode, producerId, producerEpoch) => {
      out = { errorCode, producerId, producerEpoch };
    }));
    return out;
  }

  /** Writes every queued marker (the test's stand-in for WriteTxnMarkers) and completes the transactions. */
  writeMarkers(count = Infinity): number[] {
    const codes: number[] = [];
    const queued = this.markers.splice(0, count);
    for (const m of queued) this.complete(m, codes);
    return codes;
  }

  /** Completes one transaction; a failed append is retried later, as Kafka's marker channel retries it. */
  complete(m: MarkerWrite, codes: number[] = []): void {
    let failed = false;
    const e = this.shard.completeTransaction(this.now, m, (c) => { codes.push(c); });
    e.replies.push({ send: () => {}, fail: () => { failed = true; } });
    this.apply(e);
    if (failed) this.markers.push(m);
  }

  state(transactionalId = 't'): string { return this.shard.txns.get(transactionalId)?.state ?? 'none'; }
}

export const tp = (topic: string, partition: number): TopicPartition => ({ topic, partition });
