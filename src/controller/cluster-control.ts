// ClusterControlManager: broker registrations, broker epochs and the records that fence, unfence
// and shut brokers down. Registrations themselves live in the metadata image (cluster sub-image);
// this class decides which records a registration or heartbeat produces. Session deadlines are
// the BrokerHeartbeatManager's.
import {
  ErrorCode, type BrokerHeartbeatRequest, type BrokerRegistrationRequest,
} from '../protocol/index.js';
import {
  BrokerFencingChange, BrokerInControlledShutdownChange, METADATA_VERSION_FEATURE, metadataRecord,
  type BrokerRegistration, type MetadataImage, type MetadataRecord,
} from '../metadata/index.js';
import { FeatureControlManager, METADATA_VERSION_MINIMUM } from './features.js';
import type { BrokerHeartbeatManager } from './heartbeat-manager.js';

export type RegistrationOutcome =
  | { ok: true; record: MetadataRecord; brokerEpoch: bigint; previous: BrokerRegistration | undefined }
  | { ok: false; errorCode: number; message: string };

/** What a heartbeat asks of a broker's state (Kafka's BrokerControlState transitions). */
export type HeartbeatTransition =
  | { kind: 'none' }
  | { kind: 'unfence' }
  | { kind: 'fence' }
  | { kind: 'enter-controlled-shutdown' }
  | { kind: 'shutdown-now' };

export class ClusterControlManager {
  constructor(
    readonly clusterId: string,
    private readonly heartbeats: BrokerHeartbeatManager,
    private readonly features: FeatureControlManager,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * BrokerRegistration (key 62). The new registration is fenced until the broker has caught up
   * with the log up to its RegisterBrokerRecord; its epoch is that record's offset, so every
   * registration gets a larger epoch and the old incarnation's requests become stale. A different
   * incarnation is refused while the old one still has a live session (Kafka's
   * DUPLICATE_BROKER_REGISTRATION): two processes must not share a broker id.
   * `previousBrokerEpoch` (KIP-841) is not read here: Kafka's duplicate check ignores it too; the
   * QuorumController compares it with the previous registration's epoch to call a restart clean
   * or unclean, which decides whether the broker leaves the eligible leader replicas (KIP-966).
   */
  registerBroker(image: MetadataImage, request: BrokerRegistrationRequest, brokerEpoch: bigint, nowMs: number): RegistrationOutcome {
    if (request.clusterId !== this.clusterId) {
      return { ok: false, errorCode: ErrorCode.INCONSISTENT_CLUSTER_ID, message: `Expected cluster ID ${this.clusterId}, but got cluster ID ${request.clusterId}` };
    }
    const existing = image.cluster.broker(request.brokerId);
    if (existing !== undefined && existing.incarnationId !== request.incarnationId
      && !existing.fenced && this.heartbeats.hasValidSession(request.brokerId, nowMs)) {
      return { ok: false, errorCode: ErrorCode.DUPLICATE_BROKER_REGISTRATION, message: 'Another broker is registered with that broker id.' };
    }
    const features = request.features.map((f) => ({ name: f.name, minSupportedVersion: f.minSupportedVersion, maxSupportedVersion: f.maxSupportedVersion }));
    if (!features.some((f) => f.name === METADATA_VERSION_FEATURE)) {
      features.push({ name: METADATA_VERSION_FEATURE, minSupportedVersion: METADATA_VERSION_MINIMUM, maxSupportedVersion: METADATA_VERSION_MINIMUM });
    }
    const refused = this.features.registrationError(image, features);
    if (refused !== null) return { ok: false, errorCode: refused.errorCode, message: refused.message };
    if (existing !== undefined && existing.incarnationId !== request.incarnationId) {
      this.heartbeats.remove(request.brokerId);
      this.log(`broker ${request.brokerId}: new incarnation ${request.incarnationId} replaces ${existing.incarnationId} (epoch ${existing.epoch} → ${brokerEpoch})`);
    }
    this.heartbeats.touch(request.brokerId, nowMs);
    const record = metadataRecord('RegisterBrokerRecord', {
      brokerId: request.brokerId,
      isMigratingZkBroker: false,
      incarnationId: request.incarnationId,
      brokerEpoch,
      endPoints: request.listeners.map((l) => ({ name: l.name, host: l.host, port: l.port, securityProtocol: l.securityProtocol })),
      features,
      rack: request.rack,
      fenced: true,
      inControlledShutdown: false,
      logDirs: [...request.logDirs],
    });
    return { ok: true, record, brokerEpoch, previous: existing };
  }

  /** Null when the heartbeat names the registered epoch, else why not (Kafka's checkBrokerEpoch). */
  checkBrokerEpoch(image: MetadataImage, brokerId: number, brokerEpoch: bigint): number | null {
    const b = image.cluster.broker(brokerId);
    return b !== undefined && b.epoch === brokerEpoch ? null : ErrorCode.STALE_BROKER_EPOCH;
  }

  /**
   * The state change a heartbeat asks for. A fenced broker is unfenced once it has replayed the
   * log up to its own registration; `wantShutDown` first puts an active broker in controlled
   * shutdown, and lets it go once it leads nothing and has seen the record that started it.
   */
  heartbeatTransition(b: BrokerRegistration, request: BrokerHeartbeatRequest, leadsAnything: () => boolean,
    controlledShutdownOffset: number | undefined, fencedOffset?: number): HeartbeatTransition {
    const offset = Number(request.currentMetadataOffset);
    if (request.wantShutDown) {
      if (b.fenced) return { kind: 'none' };
      if (!b.inControlledShutdown) return { kind: 'enter-controlled-shutdown' };
      const seen = controlledShutdownOffset !== undefined && offset >= controlledShutdownOffset;
      return seen && !leadsAnything() ? { kind: 'shutdown-now' } : { kind: 'none' };
    }
    // Kafka cannot cancel a controlled shutdown either: the broker stays in it until it re-registers.
    if (b.inControlledShutdown) return { kind: 'none' };
    // Stricter than Kafka (which asks only for the registration): a broker fenced for a missed
    // session must also have seen its fencing, or a broker woken from a long stall would be
    // unfenced while it still believes it leads what was moved away (see docs/failure-modes.md).
    if (b.fenced) return !request.wantFence && offset >= Number(b.epoch) && offset >= (fencedOffset ?? -1) ? { kind: 'unfence' } : { kind: 'none' };
    return request.wantFence ? { kind: 'fence' } : { kind: 'none' };
  }

  /** The record for a transition (Kafka 4 writes BrokerRegistrationChangeRecord, never Fence/UnfenceBrokerRecord). */
  registrationChange(b: BrokerRegistration, transition: 'fence' | 'unfence' | 'enter-controlled-shutdown' | 'shutdown-now'): MetadataRecord {
    const fenced = transition === 'unfence' ? BrokerFencingChange.UNFENCE
      : transition === 'enter-controlled-shutdown' ? BrokerFencingChange.NONE : BrokerFencingChange.FENCE;
    const inControlledShutdown = transition === 'enter-controlled-shutdown'
      ? BrokerInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN : BrokerInControlledShutdownChange.NONE;
    return metadataRecord('BrokerRegistrationChangeRecord', { brokerId: b.id, brokerEpoch: b.epoch, fenced, inControlledShutdown });
  }
}
