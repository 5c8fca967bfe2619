// The cluster image: registered brokers (and controllers) and the delta replaying their
// registration, fencing, controlled shutdown and unregistration records.
import type {
  BrokerRegistrationChangeRecord, FenceBrokerRecord, RegisterBrokerRecord, RegisterControllerRecord,
  UnfenceBrokerRecord, UnregisterBrokerRecord,
} from '../protocol/index.js';
import { MetadataError } from './errors.js';

export interface Endpoint {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly securityProtocol: number;
}

export interface SupportedFeature {
  readonly name: string;
  readonly minSupportedVersion: number;
  readonly maxSupportedVersion: number;
}

export interface BrokerRegistration {
  readonly id: number;
  readonly epoch: bigint;
  readonly incarnationId: string;
  /** Listeners by name, in registration order. */
  readonly endpoints: readonly Endpoint[];
  readonly features: readonly SupportedFeature[];
  readonly rack: string | null;
  readonly fenced: boolean;
  readonly inControlledShutdown: boolean;
  readonly isMigratingZkBroker: boolean;
  readonly directories: readonly string[];
}

export interface ControllerRegistration {
  readonly id: number;
  readonly incarnationId: string;
  readonly zkMigrationReady: boolean;
  readonly endpoints: readonly Endpoint[];
  readonly features: readonly SupportedFeature[];
}

/** BrokerRegistrationChangeRecord.fenced: 1 fences, -1 unfences, 0 leaves it. */
export const BrokerFencingChange = { UNFENCE: -1, NONE: 0, FENCE: 1 } as const;
/** BrokerRegistrationChangeRecord.inControlledShutdown: 1 enters controlled shutdown, 0 leaves it. */
export const BrokerInControlledShutdownChange = { NONE: 0, IN_CONTROLLED_SHUTDOWN: 1 } as const;

function endpoints(list: readonly Endpoint[]): readonly Endpoint[] {
  return Object.freeze(list.map((e) => Object.freeze({ name: e.name, host: e.host, port: e.port, securityProtocol: e.securityProtocol })));
}

function features(list: readonly SupportedFeature[]): readonly SupportedFeature[] {
  return Object.freeze(list.map((f) => Object.freeze({
    name: f.name, minSupportedVersion: f.minSupportedVersion, maxSupportedVersion: f.maxSupportedVersion,
  })));
}

export function brokerFromRecord(r: RegisterBrokerRecord): BrokerRegistration {
  return Object.freeze({
    id: r.brokerId,
    epoch: r.brokerEpoch,
    incarnationId: r.incarnationId,
    endpoints: endpoints(r.endPoints),
    features: features(r.features),
    rack: r.rack,
    fenced: r.fenced,
    inControlledShutdown: r.inControlledShutdown,
    isMigratingZkBroker: r.isMigratingZkBroker,
    directories: Object.freeze([...r.logDirs]),
  });
}

export function controllerFromRecord(r: RegisterControllerRecord): ControllerRegistration {
  return Object.freeze({
    id: r.controllerId,
    incarnationId: r.incarnationId,
    zkMigrationReady: r.zkMigrationReady,
    endpoints: endpoints(r.endPoints),
    features: features(r.features),
  });
}

export class ClusterImage {
  static readonly EMPTY = new ClusterImage(new Map(), new Map());

  constructor(
    readonly brokers: ReadonlyMap<number, BrokerRegistration>,
    readonly controllers: ReadonlyMap<number, ControllerRegistration>,
  ) {
    Object.freeze(this);
  }

  get isEmpty(): boolean { return this.brokers.size === 0 && this.controllers.size === 0; }
  broker(id: number): BrokerRegistration | undefined { return this.brokers.get(id); }

  /** Registered brokers that are not fenced, by id. */
  liveBrokers(): BrokerRegistration[] {
    return [...this.brokers.values()].filter((b) => !b.fenced).sort((a, b) => a.id - b.id);
  }

  /** The broker's endpoint for a listener name, if it is registered and has that listener. */
  brokerEndpoint(id: number, listenerName: string): Endpoint | undefined {
    return this.brokers.get(id)?.endpoints.find((e) => e.name === listenerName);
  }
}

export class ClusterDelta {
  /** Registrations created or changed in this delta; null means unregistered. */
  readonly changedBrokers = new Map<number, BrokerRegistration | null>();
  readonly changedControllers = new Map<number, ControllerRegistration>();

  constructor(readonly image: ClusterImage) {}

  broker(id: number): BrokerRegistration | undefined {
    const changed = this.changedBrokers.get(id);
    if (changed !== undefined) return changed ?? undefined;
    return this.image.brokers.get(id);
  }

  private brokerAtEpoch(id: number, epoch: bigint, what: string): BrokerRegistration {
    const b = this.broker(id);
    if (b === undefined) throw new MetadataError('UNKNOWN_BROKER', `${what}: no registration for broker ${id}`);
    if (b.epoch !== epoch) {
      throw new MetadataError('STALE_BROKER_EPOCH', `${what}: broker ${id} is at epoch ${b.epoch}, not ${epoch}`);
    }
    return b;
  }

  replayRegisterBroker(r: RegisterBrokerRecord): void {
    this.changedBrokers.set(r.brokerId, brokerFromRecord(r));
  }

  replayRegisterController(r: RegisterControllerRecord): void {
    this.changedControllers.set(r.controllerId, controllerFromRecord(r));
  }

  replayUnregisterBroker(r: UnregisterBrokerRecord): void {
    this.brokerAtEpoch(r.brokerId, r.brokerEpoch, 'UnregisterBrokerRecord');
    this.changedBrokers.set(r.brokerId, null);
  }

  replayFence(r: FenceBrokerRecord): void {
    this.change(this.brokerAtEpoch(r.id, r.epoch, 'FenceBrokerRecord'), { fenced: true });
  }

  replayUnfence(r: UnfenceBrokerRecord): void {
    this.change(this.brokerAtEpoch(r.id, r.epoch, 'UnfenceBrokerRecord'), { fenced: false });
  }

  replayRegistrationChange(r: BrokerRegistrationChangeRecord): void {
    const b = this.brokerAtEpoch(r.brokerId, r.brokerEpoch, 'BrokerRegistrationChangeRecord');
    const patch: { fenced?: boolean; inControlledShutdown?: boolean; directories?: readonly string[] } = {};
    if (r.fenced === BrokerFencingChange.FENCE) patch.fenced = true;
    else if (r.fenced === BrokerFencingChange.UNFENCE) patch.fenced = false;
    else if (r.fenced !== BrokerFencingChange.NONE) throw new MetadataError('INVALID_RECORD', `fencing change ${r.fenced}`);
    if (r.inControlledShutdown === BrokerInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN) patch.inControlledShutdown = true;
    else if (r.inControlledShutdown !== BrokerInControlledShutdownChange.NONE) {
      throw new MetadataError('INVALID_RECORD', `controlled shutdown change ${r.inControlledShutdown}`);
    }
    // An empty directory list means "no change" (Kafka filters it out the same way).
    if (r.logDirs.length > 0) patch.directories = Object.freeze([...r.logDirs]);
    this.change(b, patch);
  }

  private change(b: BrokerRegistration, patch: Partial<BrokerRegistration>): void {
    this.changedBrokers.set(b.id, Object.freeze({ ...b, ...patch }));
  }

  apply(): ClusterImage {
    if (this.changedBrokers.size === 0 && this.changedControllers.size === 0) return this.image;
    const brokers = new Map(this.image.brokers);
    for (const [id, b] of this.changedBrokers) {
      if (b === null) brokers.delete(id);
      else brokers.set(id, b);
    }
    const controllers = this.changedControllers.size === 0 ? this.image.controllers : new Map(this.image.controllers);
    for (const [id, c] of this.changedControllers) (controllers as Map<number, ControllerRegistration>).set(id, c);
    return new ClusterImage(brokers, controllers);
  }
}
