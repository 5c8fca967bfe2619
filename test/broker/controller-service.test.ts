// The controller driver's answers when leadership is missing or lost: NOT_CONTROLLER in each
// operation's own response (never an exception), for requests that arrive on a node that does not
// lead and for requests pending when this node stops leading. The happy path runs in every server
// test (registration.test.ts checks its records).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ControllerService } from '../../src/broker/index.js';
import type { LogMetadata } from '../../src/broker/metadata-log.js';
import { MetadataImage, type MetadataRecord } from '../../src/metadata/index.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { ManualClock, Prng } from '../../src/util/index.js';

/** A metadata log whose leadership the test sets and whose proposals never commit on their own. */
function fakeLog() {
  const state = { isLeader: true, epoch: 1 };
  const listeners: (() => void)[] = [];
  const proposals: { records: readonly MetadataRecord[]; reject: (e: Error) => void }[] = [];
  const md = {
    image: MetadataImage.EMPTY,
    leadership: () => ({ isLeader: state.isLeader, epoch: state.epoch, leaderId: state.isLeader ? 1 : 2, logEndOffset: 1, appliedOffset: 1 }),
    onChange: (l: () => void) => { listeners.push(l); },
    propose: (records: readonly MetadataRecord[]) => new Promise((_, reject) => { proposals.push({ records, reject }); }),
  };
  return { md: md as unknown as LogMetadata, state, proposals, changed: () => listeners.forEach((l) => l()) };
}

function service(md: LogMetadata) {
  return new ControllerService(md, {
    clusterId: 'c', nodeId: 1, clock: new ManualClock(0), prng: new Prng(1), sessionTimeoutMs: 9000, uncleanLeaderElectionEnable: false,
    topicDefaults: { numPartitions: 1, defaultReplicationFactor: 1, partitionsPerRequestMax: 1000 }, validateTopicConfigs: () => null,
    logger: { info() {}, warn() {}, error() {} },
  });
}

test('operations pending when leadership is lost, and operations on a node that does not lead, answer NOT_CONTROLLER', async () => {
  const log = fakeLog();
  const s = service(log.md);
  s.start();
  try {
    assert.equal(s.isActive, true);
    assert.equal(log.proposals.length, 1, 'a new cluster\'s log is bootstrapped with its feature levels');
    const pending = [
      s.createTopics({ topics: [{ name: 't', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 1000, validateOnly: false }),
      s.alterConfigs({ resourceType: 4, resourceName: '', ops: [{ name: 'log.retention.ms', configOperation: 0, value: '1000' }], replace: false, validateOnly: false }),
      s.allocateProducerIds({ brokerId: 1, brokerEpoch: 5n }),
    ] as const;
    log.state.isLeader = false;
    log.state.epoch = 2;
    log.changed();
    for (const p of log.proposals) p.reject(new Error('not the leader'));
    const [created, altered, ids] = await Promise.all(pending);
    assert.deepEqual(created.map((t) => t.errorCode), [ErrorCode.NOT_CONTROLLER]);
    assert.equal(altered.errorCode, ErrorCode.NOT_CONTROLLER);
    // It wrote nothing, but what it read (the bootstrap records) never committed: not an answer to trust.
    assert.equal(ids.errorCode, ErrorCode.NOT_CONTROLLER);
  } finally {
    assert.equal(s.isActive, false);
    const r = await s.registerBroker({
      brokerId: 1, clusterId: 'c', incarnationId: 'AAAAAAAAAAAAAAAAAAAAAA', listeners: [], features: [], rack: null, isMigratingZkBroker: false, logDirs: [], previousBrokerEpoch: -1n,
    });
    assert.equal(r.errorCode, ErrorCode.NOT_CONTROLLER);
    const hb = await s.brokerHeartbeat({ brokerId: 1, brokerEpoch: 1n, currentMetadataOffset: 0n, wantFence: false, wantShutDown: false, offlineLogDirs: [] });
    assert.equal(hb.errorCode, ErrorCode.NOT_CONTROLLER);
    s.close();
  }
});
