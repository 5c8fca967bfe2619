// ProducerIdControlManager: AllocateProducerIds (key 67). Each call takes the next block of ids
// by emitting a ProducerIdsRecord whose nextProducerId is the end of the block; replay moves the
// image's cursor there, so once committed no later block can overlap it, on any broker.
import { ErrorCode, type AllocateProducerIdsRequest, type AllocateProducerIdsResponse } from '../protocol/index.js';
import { metadataRecord, type MetadataImage, type MetadataRecord } from '../metadata/index.js';

/** Kafka's ProducerIdManager block size. */
export const PRODUCER_ID_BLOCK_SIZE = 1000;
const PRODUCER_ID_MAX = (1n << 63n) - 1n;

export class ProducerIdControlManager {
  /** `brokerEpochError` checks the broker's registration (Kafka's checkBrokerEpoch). */
  generateNextProducerIds(image: MetadataImage, request: AllocateProducerIdsRequest):
    { records: MetadataRecord[]; response: AllocateProducerIdsResponse } {
    const failed = (errorCode: number): { records: MetadataRecord[]; response: AllocateProducerIdsResponse } =>
      ({ records: [], response: { throttleTimeMs: 0, errorCode, producerIdStart: -1n, producerIdLen: 0 } });
    const broker = image.cluster.broker(request.brokerId);
    if (broker === undefined || broker.epoch !== request.brokerEpoch) return failed(ErrorCode.STALE_BROKER_EPOCH);
    const start = image.producerIds.nextProducerId < 0n ? 0n : image.producerIds.nextProducerId;
    const end = start + BigInt(PRODUCER_ID_BLOCK_SIZE);
    if (end > PRODUCER_ID_MAX) return failed(ErrorCode.UNKNOWN_SERVER_ERROR);
    return {
      records: [metadataRecord('ProducerIdsRecord', { brokerId: request.brokerId, brokerEpoch: request.brokerEpoch, nextProducerId: end })],
      response: { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerIdStart: start, producerIdLen: PRODUCER_ID_BLOCK_SIZE },
    };
  }
}
