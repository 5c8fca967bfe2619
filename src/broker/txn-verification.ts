// Transaction verification with a coordinator on another broker (Kafka's AddPartitionsToTxnManager,
// KIP-890): a partition leader asks the broker that leads the transactional id's
// `__transaction_state` partition whether a transactional batch's partitions are in the producer's
// ongoing transaction (AddPartitionsToTxn v4+, verifyOnly), or, for a transaction version 2
// client, adds them (v5, not verifyOnly). Per coordinator broker one request is in flight at a
// time; what arrives meanwhile waits and goes in the next request, one entry per transactional id
// (the request's key), so the traffic is batched under load and needs no timer. The queue per
// broker is bounded (limits.txnVerificationsPendingMax transactional ids), as is each request
// (limits.partitionsPerRequestMax partitions); beyond them a produce is told to retry.
//
// Errors are the coordinator's codes per partition; a broken connection or a missing answer is
// NETWORK_EXCEPTION, which callers treat like a coordinator that moved (retriable).
import { ErrorCode, type AddPartitionsToTxnResponse } from '../protocol/index.js';
import type { PartitionError } from '../coordinator/index.js';
import { limits } from '../util/index.js';
import type { InterBrokerConnections } from '../client/index.js';

export interface TxnPartitionsCheck {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  partitions: { topic: string; partition: number }[];
  /** True: only say whether the partitions are in the transaction; false: add them (transaction version 2). */
  verifyOnly: boolean;
}

interface Pending { check: TxnPartitionsCheck; answer: ((errors: PartitionError[]) => void)[] }

interface BrokerQueue { pending: Map<string, Pending>; inFlight: boolean }

/** v5: an add (verifyOnly false) is for a transaction version 2 client; v4 is the first broker-to-broker version. */
const ADD_PARTITIONS_VERSION_MAX = 5;
const ADD_PARTITIONS_VERSION_MIN = 4;

const sameTransaction = (a: TxnPartitionsCheck, b: TxnPartitionsCheck) =>
  a.producerId === b.producerId && a.producerEpoch === b.producerEpoch && a.verifyOnly === b.verifyOnly;

const only = (check: TxnPartitionsCheck, errors: PartitionError[]) =>
  errors.filter((e) => check.partitions.some((tp) => tp.topic === e.topic && tp.partition === e.partition));

const failAll = (check: TxnPartitionsCheck, errorCode: number): PartitionError[] => check.partitions.map((tp) => ({ ...tp, errorCode }));

export class AddPartitionsToTxnManager {
  private readonly brokers = new Map<number, BrokerQueue>();

  constructor(private readonly connections: InterBrokerConnections, private readonly warn: (message: string) => void) {}

  /** Asks coordinator broker `nodeId`; resolves with an error code per partition of `check`. */
  check(nodeId: number, check: TxnPartitionsCheck): Promise<PartitionError[]> {
    let q = this.brokers.get(nodeId);
    if (!q) this.brokers.set(nodeId, q = { pending: new Map(), inFlight: false });
    const queue = q;
    return new Promise((resolve) => {
      const waiting = queue.pending.get(check.transactionalId);
      if (waiting && sameTransaction(waiting.check, check)) {
        // The same transaction asks again (another partition's batch): one entry asks for both.
        for (const tp of check.partitions) {
          if (!waiting.check.partitions.some((x) => x.topic === tp.topic && x.partition === tp.partition)) waiting.check.partitions.push(tp);
        }
        waiting.answer.push((errors) => resolve(only(check, errors)));
        return;
      }
      if (waiting) {
        // One entry per transactional id: the newer producer epoch stays, the older is told to retry or is fenced (as Kafka).
        if (waiting.check.producerEpoch > check.producerEpoch) { resolve(failAll(check, ErrorCode.INVALID_PRODUCER_EPOCH)); return; }
        queue.pending.delete(check.transactionalId);
        for (const a of waiting.answer) a(failAll(waiting.check, ErrorCode.NETWORK_EXCEPTION));
      } else if (queue.pending.size >= limits.txnVerificationsPendingMax) {
        resolve(failAll(check, ErrorCode.NETWORK_EXCEPTION));
        return;
      }
      // Each caller gets the codes of its own partitions (the entry may grow with other callers').
      queue.pending.set(check.transactionalId, { check: { ...check, partitions: [...check.partitions] }, answer: [(errors) => resolve(only(check, errors))] });
      if (!queue.inFlight) queueMicrotask(() => { void this.flush(nodeId, queue); });
    });
  }

  /** Sends what waits for `nodeId` (up to the per-request partition limit), then whatever came meanwhile. */
  private async flush(nodeId: number, queue: BrokerQueue): Promise<void> {
    if (queue.inFlight || queue.pending.size === 0) return;
    queue.inFlight = true;
    const batch: Pending[] = [];
    let partitions = 0;
    for (const [id, p] of queue.pending) {
      if (batch.length > 0 && partitions + p.check.partitions.length > limits.partitionsPerRequestMax) break;
      batch.push(p);
      partitions += p.check.partitions.length;
      queue.pending.delete(id);
    }
    try {
      const answers = await this.send(nodeId, batch.map((p) => p.check));
      batch.forEach((p, i) => { for (const a of p.answer) a(answers[i]!); });
    } finally {
      queue.inFlight = false;
      if (queue.pending.size > 0) void this.flush(nodeId, queue);
      else if (this.brokers.get(nodeId) === queue) this.brokers.delete(nodeId);
    }
  }

  /** One AddPartitionsToTxn; the errors for each check, in order. Never rejects. */
  private async send(nodeId: number, checks: TxnPartitionsCheck[]): Promise<PartitionError[][]> {
    let response: AddPartitionsToTxnResponse;
    try {
      const conn = await this.connections.connection(nodeId);
      const version = conn.version(24, ADD_PARTITIONS_VERSION_MAX);
      if (version < ADD_PARTITIONS_VERSION_MIN) throw new Error(`broker ${nodeId} answers AddPartitionsToTxn only up to v${version}`);
      response = await conn.send(24, version, {
        transactions: checks.map((c) => ({
          transactionalId: c.transactionalId, producerId: c.producerId, producerEpoch: c.producerEpoch, verifyOnly: c.verifyOnly,
          topics: byTopic(c.partitions),
        })),
        v3AndBelowTransactionalId: '', v3AndBelowProducerId: -1n, v3AndBelowProducerEpoch: -1, v3AndBelowTopics: [],
      });
    } catch (err) {
      this.connections.drop(nodeId);
      this.warn(`transaction verification with broker ${nodeId}: ${err instanceof Error ? err.message : String(err)}`);
      return checks.map((c) => failAll(c, ErrorCode.NETWORK_EXCEPTION));
    }
    if (response.errorCode !== ErrorCode.NONE) return checks.map((c) => failAll(c, response.errorCode));
    return checks.map((c) => {
      const result = response.resultsByTransaction.find((r) => r.transactionalId === c.transactionalId);
      const code = (tp: { topic: string; partition: number }) => result?.topicResults.find((t) => t.name === tp.topic)
        ?.resultsByPartition.find((p) => p.partitionIndex === tp.partition)?.partitionErrorCode ?? ErrorCode.NETWORK_EXCEPTION;
      return c.partitions.map((tp) => ({ ...tp, errorCode: code(tp) }));
    });
  }
}

function byTopic(partitions: { topic: string; partition: number }[]): { name: string; partitions: number[] }[] {
  const out = new Map<string, number[]>();
  for (const tp of partitions) {
    let list = out.get(tp.topic);
    if (!list) out.set(tp.topic, list = []);
    list.push(tp.partition);
  }
  return [...out].map(([name, ps]) => ({ name, partitions: ps }));
}
