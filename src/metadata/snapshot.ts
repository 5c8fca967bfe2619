// Writes an image back as the records that rebuild it (what a snapshot holds), in Kafka's order:
// features first (metadata.version before anything that depends on it), then cluster, topics,
// configs, quotas, producer ids, ACLs, SCRAM, tokens. Replaying them on the empty image gives an
// equal image. Records are written at the latest version this build knows.
import { metadataRecord, type MetadataRecord } from './records.js';
import { METADATA_VERSION_FEATURE } from './features.js';
import type { MetadataImage } from './image.js';

function featureRecords(image: MetadataImage, out: MetadataRecord[]): void {
  const levels = image.features.finalizedVersions;
  const mv = levels.get(METADATA_VERSION_FEATURE);
  if (mv !== undefined) out.push(metadataRecord('FeatureLevelRecord', { name: METADATA_VERSION_FEATURE, featureLevel: mv }));
  for (const [name, featureLevel] of levels) {
    if (name !== METADATA_VERSION_FEATURE) out.push(metadataRecord('FeatureLevelRecord', { name, featureLevel }));
  }
}

function clusterRecords(image: MetadataImage, out: MetadataRecord[]): void {
  for (const b of image.cluster.brokers.values()) {
    out.push(metadataRecord('RegisterBrokerRecord', {
      brokerId: b.id, isMigratingZkBroker: b.isMigratingZkBroker, incarnationId: b.incarnationId, brokerEpoch: b.epoch,
      endPoints: b.endpoints.map((e) => ({ ...e })), features: b.features.map((f) => ({ ...f })), rack: b.rack,
      fenced: b.fenced, inControlledShutdown: b.inControlledShutdown, logDirs: [...b.directories],
    }));
  }
  for (const c of image.cluster.controllers.values()) {
    out.push(metadataRecord('RegisterControllerRecord', {
      controllerId: c.id, incarnationId: c.incarnationId, zkMigrationReady: c.zkMigrationReady,
      endPoints: c.endpoints.map((e) => ({ ...e })), features: c.features.map((f) => ({ ...f })),
    }));
  }
}

function topicRecords(image: MetadataImage, out: MetadataRecord[]): void {
  for (const t of image.topics.topicsById.values()) {
    out.push(metadataRecord('TopicRecord', { name: t.name, topicId: t.id }));
    for (const [partitionId, p] of t.partitions) {
      out.push(metadataRecord('PartitionRecord', {
        partitionId, topicId: t.id, replicas: [...p.replicas], isr: [...p.isr],
        removingReplicas: [...p.removingReplicas], addingReplicas: [...p.addingReplicas], leader: p.leader,
        leaderRecoveryState: p.leaderRecoveryState, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch,
        directories: [...p.directories],
        // Tagged and empty by default: like Kafka, write them only when they hold something.
        eligibleLeaderReplicas: p.elr.length > 0 ? [...p.elr] : null,
        lastKnownElr: p.lastKnownElr.length > 0 ? [...p.lastKnownElr] : null,
      }));
    }
  }
}

function otherRecords(image: MetadataImage, out: MetadataRecord[]): void {
  for (const r of image.configs.resources.values()) {
    for (const [name, value] of r.entries) {
      out.push(metadataRecord('ConfigRecord', { resourceType: r.type, resourceName: r.name, name, value }));
    }
  }
  for (const q of image.clientQuotas.entities.values()) {
    for (const [key, value] of q.quotas) {
      out.push(metadataRecord('ClientQuotaRecord', { entity: q.entity.map((p) => ({ ...p })), key, value, remove: false }));
    }
  }
  if (!image.producerIds.isEmpty) {
    out.push(metadataRecord('ProducerIdsRecord', { brokerId: -1, brokerEpoch: -1n, nextProducerId: image.producerIds.nextProducerId }));
  }
  for (const a of image.acls.acls.values()) out.push(metadataRecord('AccessControlEntryRecord', { ...a }));
  for (const [name, creds] of image.scram.users) {
    for (const [mechanism, c] of creds) {
      out.push(metadataRecord('UserScramCredentialRecord', {
        name, mechanism, salt: c.salt, storedKey: c.storedKey, serverKey: c.serverKey, iterations: c.iterations,
      }));
    }
  }
  for (const t of image.delegationTokens.tokens.values()) {
    out.push(metadataRecord('DelegationTokenRecord', {
      tokenId: t.tokenId, owner: t.owner, requester: t.requester, renewers: [...t.renewers],
      issueTimestamp: t.issueTimestampMs, maxTimestamp: t.maxTimestampMs, expirationTimestamp: t.expirationTimestampMs,
    }));
  }
}

export function imageToRecords(image: MetadataImage): MetadataRecord[] {
  const out: MetadataRecord[] = [];
  featureRecords(image, out);
  clusterRecords(image, out);
  topicRecords(image, out);
  otherRecords(image, out);
  return out;
}
