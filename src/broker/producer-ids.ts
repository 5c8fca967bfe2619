// Producer ids for idempotent producers. Ids are handed out from blocks; each block is taken by
// committing a ProducerIdsRecord (the next id not yet handed out) to the cluster metadata before
// any id of it is used, so no id is given twice, even across restarts (a restart skips the rest of
// the block it had, as Kafka's brokers do).
import { RecordType, type EmittedRecord } from '../controller/index.js';
import { assert } from '../util/index.js';

/** Kafka's block size (ProducerIdManager's PRODUCER_ID_BLOCK_SIZE). */
export const PRODUCER_ID_BLOCK_SIZE = 1000n;

export class ProducerIdManager {
  private next = -1n;
  private end = -1n;
  private taking: Promise<void> | null = null;

  constructor(
    private readonly nodeId: number,
    /** The first id no block has taken yet, from the metadata (-1 when none was ever taken). */
    private readonly nextUnallocated: () => bigint,
    private readonly commit: (records: EmittedRecord[]) => Promise<void>,
  ) {}

  async generate(): Promise<bigint> {
    while (this.next < 0n || this.next >= this.end) {
      this.taking ??= this.takeBlock().finally(() => { this.taking = null; });
      await this.taking;
    }
    return this.next++;
  }

  private async takeBlock(): Promise<void> {
    const start = this.nextUnallocated() < 0n ? 0n : this.nextUnallocated();
    const end = start + PRODUCER_ID_BLOCK_SIZE;
    await this.commit([{ type: RecordType.ProducerIds, version: 0, data: { brokerId: this.nodeId, brokerEpoch: 0n, nextProducerId: end } }]);
    assert(this.nextUnallocated() === end, `the producer id block [${start}, ${end}) was not recorded`);
    this.next = start;
    this.end = end;
  }
}
