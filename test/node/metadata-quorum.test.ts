// How a node's configuration maps onto its place in the metadata quorum (disk-backend's
// metadataQuorum): alone without network, a voter on its controller listener, or an observer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { metadataQuorum } from '../../src/node/disk-backend.js';
import { parseBrokerConfig } from '../../src/config/index.js';

const COMBINED = {
  'process.roles': 'broker,controller', 'controller.listener.names': 'CONTROLLER',
  'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
};

test('no process.roles: a quorum of this node alone, no controller listener; a controller that is the only voter listens for brokers on other nodes', () => {
  assert.deepEqual(metadataQuorum(parseBrokerConfig({ 'node.id': '3' }), 3), { voters: [3] });
  const alone = parseBrokerConfig({ ...COMBINED, 'node.id': '1', 'listeners': 'PLAINTEXT://:9092,CONTROLLER://:9093', 'controller.quorum.voters': '1@localhost:9093' });
  assert.deepEqual(metadataQuorum(alone, 1), { voterAddresses: [{ nodeId: 1, host: 'localhost', port: 9093 }], controllerListener: { host: '0.0.0.0', port: 9093 } });
});

test('a combined node of several voters listens on its controller listener; a broker-only node is an observer', () => {
  const voters = '1@127.0.0.1:19093,2@127.0.0.1:19094,3@127.0.0.1:19095';
  const two = parseBrokerConfig({ ...COMBINED, 'node.id': '2', 'listeners': 'PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19094', 'controller.quorum.voters': voters });
  const q = metadataQuorum(two, 2);
  assert.deepEqual(q.voterAddresses?.map((v) => `${v.nodeId}@${v.host}:${v.port}`).join(','), voters);
  assert.deepEqual(q.controllerListener, { host: '127.0.0.1', port: 19094 });
  const observer = parseBrokerConfig({ ...COMBINED, 'process.roles': 'broker', 'node.id': '4', 'listeners': 'PLAINTEXT://127.0.0.1:19096', 'controller.quorum.voters': voters });
  const o = metadataQuorum(observer, 4);
  assert.equal(o.voterAddresses?.length, 3);
  assert.equal(o.controllerListener, undefined, 'an observer listens on an ephemeral loopback port');
});

test('a broker named as a voter is refused naming process.roles', () => {
  const brokerVoter = parseBrokerConfig({ ...COMBINED, 'process.roles': 'broker', 'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:19092', 'controller.quorum.voters': '1@127.0.0.1:19093,2@127.0.0.1:19094' });
  assert.throws(() => metadataQuorum(brokerVoter, 1), /process\.roles/);
});
