// `logline group --type share` as a user runs it (kafka-share-groups.sh's commands) against a
// broker with a share group whose member speaks the share APIs: list, describe (members, start
// offsets, log end offsets, lag), reset-offsets (plan, refused while a member is in the group,
// executed once it left), delete-offsets and delete.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { startServer } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';
import { ACCEPT, Member, offsetsOf } from '../broker/share-member.js';

const BIN = 'bin/logline.js';

test('group --type share: list, describe with members, start offsets and lag, reset-offsets, delete-offsets, delete', { timeout: 120_000 }, async () => {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], config: parseBrokerConfig({ 'node.id': '1', 'offsets.topic.num.partitions': '2', 'share.coordinator.state.topic.num.partitions': '2' }), dataDir: tempDataDir() });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const client = new ClusterClient({ bootstrap, clientId: 'cli-share-test' });
  const cli = async (...args: string[]) => {
    const r = await runProcess(process.execPath, [BIN, 'group', ...args, '--type', 'share', '--bootstrap-server', bootstrap], null, 30_000);
    return { code: r.code, out: r.stdout, err: r.stderr, json: () => JSON.parse(r.stdout) };
  };
  try {
    const kafka = new Kafka({ clientId: 'cli-share-test', brokers: [bootstrap], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'jobs', numPartitions: 1 }] });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'jobs', messages: Array.from({ length: 10 }, (_, i) => ({ value: `job-${i}` })) });
    await producer.disconnect();
    const c = await client.any();
    await c.send(ApiKey.IncrementalAlterConfigs, 1, { resources: [{ resourceType: 32, resourceName: 'workers', configs: [{ name: 'share.auto.offset.reset', configOperation: 0, value: 'earliest' }] }], validateOnly: false });
    const m = new Member(c, 'workers', 'jobs', (await client.metadata(['jobs']))[0]!.topicId);
    await m.join();
    assert.equal(offsetsOf(await m.fetchSome()).length, 10);
    assert.equal(await m.acknowledge(0, 5, ACCEPT), 0);

    const listed = await cli('list', '--json');
    assert.equal(listed.code, 0, listed.err);
    assert.deepEqual(listed.json(), [{ group: 'workers', state: 'Stable' }]);
    const described = (await cli('describe', 'workers', '--json')).json();
    assert.equal(described.state, 'Stable');
    assert.deepEqual(described.partitions, [{ topic: 'jobs', partition: 0, startOffset: 6, logEndOffset: 10, lag: 4 }]);
    assert.deepEqual(described.members.map((x: any) => [x.memberId, x.assignment]), [[m.memberId, 'jobs:0']]);
    const human = await cli('describe', 'workers');
    assert.match(human.out, /TOPIC\s+PARTITION\s+STARTOFFSET\s+LOGENDOFFSET\s+LAG/);
    assert.match(human.out, /MEMBERID\s+CLIENTID\s+HOST\s+EPOCH\s+ASSIGNMENT/);

    const plan = await cli('reset-offsets', 'workers', '--to-offset', '8', '--json');
    assert.deepEqual(plan.json().plan, [{ topic: 'jobs', partition: 0, startOffset: 6, newStartOffset: 8 }]);
    assert.equal((await cli('describe', 'workers', '--json')).json().partitions[0].startOffset, 6, 'a plan changes nothing');
    const refused = await cli('reset-offsets', 'workers', '--to-offset', '8', '--execute');
    assert.equal(refused.code, 1);
    assert.match(refused.err, /non.empty|members/i);
    await m.leave();
    const executed = await cli('reset-offsets', 'workers', '--to-latest', '--execute', '--json');
    assert.equal(executed.code, 0, executed.err);
    assert.deepEqual((await cli('describe', 'workers', '--json')).json().partitions, [{ topic: 'jobs', partition: 0, startOffset: 10, logEndOffset: 10, lag: 0 }]);

    const forgot = await cli('delete-offsets', 'workers', '--topic', 'jobs', '--json');
    assert.equal(forgot.code, 0, forgot.err);
    assert.deepEqual((await cli('describe', 'workers', '--json')).json().partitions, []);
    const deleted = await cli('delete', 'workers');
    assert.equal(deleted.code, 0, deleted.err);
    assert.deepEqual((await cli('list', '--json')).json(), []);
  } finally {
    client.close();
    await server.close();
  }
});
