// Test helper: drives a QuorumController as a single active controller whose appends commit at
// once (the records of one operation land at consecutive offsets, as in one Raft batch).
import { QuorumController, type ControllerResult, type QuorumControllerOptions } from '../../src/controller/index.js';
import type { BrokerRegistrationRequest, BrokerHeartbeatRequest } from '../../src/protocol/index.js';
import { metadataRecord, type MetadataRecord } from '../../src/metadata/index.js';
import { Prng } from '../../src/util/index.js';

export const CLUSTER_ID = 'q1Sh-9_ISia_zwGINzRvyQ';

export class Driver {
  readonly log: { offset: number; record: MetadataRecord }[] = [];
  readonly lines: string[] = [];
  readonly controller: QuorumController;

  constructor(options: Partial<QuorumControllerOptions> = {}, bootstrap = true) {
    this.controller = new QuorumController({ clusterId: CLUSTER_ID, prng: new Prng(7), log: (l) => this.lines.push(l), ...options });
    this.controller.activate(0, 0);
    if (bootstrap) this.run(this.controller.bootstrap());
  }

  /** Appends and replays the records; commits them unless told not to. Returns the response. */
  run<T>(result: ControllerResult<T>, commit = true): T {
    let offset = this.controller.nextWriteOffset;
    for (const record of result.records) {
      this.controller.replay(record, offset);
      this.log.push({ offset, record });
      offset++;
    }
    if (commit) this.controller.commit(offset - 1);
    return result.response;
  }

  register(brokerId: number, nowMs: number, extra: Partial<BrokerRegistrationRequest> = {}) {
    return this.run(this.controller.registerBroker(registration(brokerId, extra), nowMs));
  }

  heartbeat(brokerId: number, nowMs: number, extra: Partial<BrokerHeartbeatRequest> = {}) {
    const b = this.controller.image.cluster.broker(brokerId);
    return this.run(this.controller.processBrokerHeartbeat({
      brokerId, brokerEpoch: b?.epoch ?? -1n, currentMetadataOffset: BigInt(this.controller.lastReplayedOffset),
      wantFence: false, wantShutDown: false, offlineLogDirs: [], ...extra,
    }, nowMs));
  }

  /** Finalizes a feature level as an UpdateFeatures would (a FeatureLevelRecord). */
  setFeature(name: string, featureLevel: number): void {
    this.run({ records: [metadataRecord('FeatureLevelRecord', { name, featureLevel }) as MetadataRecord], response: undefined });
  }

  /** Registers and unfences brokers 1..n (racks given by `rack(id)`). */
  startBrokers(n: number, nowMs = 0, rack: (id: number) => string | null = () => null): void {
    for (let id = 1; id <= n; id++) this.register(id, nowMs, { rack: rack(id) });
    for (let id = 1; id <= n; id++) this.heartbeat(id, nowMs);
  }

  createTopic(name: string, numPartitions: number, replicationFactor: number) {
    return this.run(this.controller.createTopics({
      topics: [{ name, numPartitions, replicationFactor, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false,
    }))[0]!;
  }
}

export function registration(brokerId: number, extra: Partial<BrokerRegistrationRequest> = {}): BrokerRegistrationRequest {
  return {
    brokerId, clusterId: CLUSTER_ID, incarnationId: uuidFor(brokerId),
    listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9091 + brokerId, securityProtocol: 0 }],
    features: [
      { name: 'metadata.version', minSupportedVersion: 7, maxSupportedVersion: 25 },
      { name: 'transaction.version', minSupportedVersion: 0, maxSupportedVersion: 2 },
      { name: 'group.version', minSupportedVersion: 0, maxSupportedVersion: 1 },
      { name: 'share.version', minSupportedVersion: 0, maxSupportedVersion: 1 },
      { name: 'eligible.leader.replicas.version', minSupportedVersion: 0, maxSupportedVersion: 1 },
    ],
    rack: null, isMigratingZkBroker: false, logDirs: [], previousBrokerEpoch: -1n, ...extra,
  };
}

/** A valid UUID (22 base64url characters) made from a number. */
export function uuidFor(n: number): string {
  const b = Buffer.alloc(16);
  b.writeUInt32BE(0x10000000, 0);
  b.writeUInt32BE(n >>> 0, 12);
  return b.toString('base64url');
}
