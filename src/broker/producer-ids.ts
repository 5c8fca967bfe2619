// Producer ids for idempotent and transactional producers. Ids are handed out from blocks the
// controller allocates (AllocateProducerIds, key 67, with this broker's epoch): the controller
// commits a ProducerIdsRecord before it answers, so no id is given twice, across brokers and
// across restarts (a restart skips the rest of the block it had, as Kafka's brokers do).
import { ErrorCode } from '../protocol/index.js';
import type { ControllerChannel } from './controller-channel.js';

/** No block could be had (not registered yet, no active controller): InitProducerId answers a retriable error. */
export class ProducerIdError extends Error {
  override name = 'ProducerIdError';
  constructor(readonly errorCode: number, message: string) { super(message); }
}

export class ProducerIdManager {
  private next = -1n;
  private end = -1n;
  private taking: Promise<void> | null = null;

  constructor(
    private readonly nodeId: number,
    /** This broker's epoch (its registration), -1 before it registered. */
    private readonly brokerEpoch: () => bigint,
    private readonly controller: () => ControllerChannel,
  ) {}

  async generate(): Promise<bigint> {
    while (this.next < 0n || this.next >= this.end) {
      this.taking ??= this.takeBlock().finally(() => { this.taking = null; });
      await this.taking;
    }
    return this.next++;
  }

  private async takeBlock(): Promise<void> {
    const brokerEpoch = this.brokerEpoch();
    if (brokerEpoch < 0n) throw new ProducerIdError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, `broker ${this.nodeId} is not registered yet`);
    const r = await this.controller().allocateProducerIds({ brokerId: this.nodeId, brokerEpoch });
    if (r.errorCode !== ErrorCode.NONE) throw new ProducerIdError(r.errorCode, `no producer id block: error ${r.errorCode}`);
    this.next = r.producerIdStart;
    this.end = r.producerIdStart + BigInt(r.producerIdLen);
  }
}
