// Record builders shared by the metadata tests.
import { metadataRecord, type MetadataRecord } from '../../src/metadata/index.js';

export const T1 = 'AAECAwQFBgcICQoLDA0ODw';
export const T2 = 'EBESExQVFhcYGRobHB0eHw';
export const T3 = 'ICEiIyQlJicoKSorLC0uLw';

export function topic(name: string, topicId: string): MetadataRecord {
  return metadataRecord('TopicRecord', { name, topicId });
}

export function partition(topicId: string, partitionId: number, replicas: number[], leader = replicas[0] ?? -1): MetadataRecord {
  return metadataRecord('PartitionRecord', {
    topicId, partitionId, replicas, isr: [...replicas], leader, leaderEpoch: 0, partitionEpoch: 0,
  });
}

export function broker(brokerId: number, brokerEpoch: bigint, fenced = true): MetadataRecord {
  return metadataRecord('RegisterBrokerRecord', {
    brokerId, brokerEpoch, incarnationId: T3, fenced, rack: null,
    endPoints: [{ name: 'PLAINTEXT', host: 'localhost', port: 9092 + brokerId, securityProtocol: 0 }],
    features: [{ name: 'metadata.version', minSupportedVersion: 1, maxSupportedVersion: 20 }],
  });
}
