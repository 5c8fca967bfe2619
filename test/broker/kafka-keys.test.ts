// Kafka 4.x's whole key list (Kafka 4.2.0's, with the 4.0 keys removed since) against a one-node server: server.properties with every accepted
// broker key starts it; AlterConfigs and IncrementalAlterConfigs (validate only) answer every key
// of every resource kind with success or INVALID_CONFIG and a reason; the unused keys, once set,
// are described as dynamic and say they are unused; and librdkafka's admin AlterConfigs of
// sasl.kerberos.min.time.before.relogin on the BROKER resource (its admin test's case) succeeds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { tempDataDir } from './process-helpers.js';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { ClusterClient } from '../../src/client/index.js';
import { ApiKey, ErrorCode } from '../../src/protocol/index.js';
import { keyOf, parseBrokerConfig, parseProperties, refusedReason, type ConfigKind } from '../../src/config/index.js';
import { KAFKA_KEYS, TIERED, sampleValue } from '../config/kafka-keys.js';

const Resource = { topic: 2, broker: 4, 'client-metrics': 16, group: 32, link: 64 } as const;
const PYTHON = '/usr/bin/python3';

/** server.properties setting every accepted Kafka broker key (the listener and role keys aside). */
function serverProperties(): string {
  const skip = ['listeners', 'advertised.listeners', 'process.roles', 'security.inter.broker.protocol', 'node.id', 'broker.id', 'log.dirs', 'log.dir', 'metadata.log.dir'];
  const lines = KAFKA_KEYS.broker.map((n) => keyOf('broker', n)).filter((d) => d !== undefined && !skip.includes(d.name))
    .map((d) => `${d!.name}=${sampleValue(d!).replace(/\\/g, '\\\\')}`);
  return ['node.id=1', 'listeners=PLAINTEXT://127.0.0.1:0', 'offsets.topic.replication.factor=1', ...lines].join('\n');
}

async function withServer(fn: (client: ClusterClient, bootstrap: string) => Promise<void>): Promise<void> {
  const props = parseProperties(serverProperties());
  // Kafka's defaults for the internal topics need three brokers; this is one.
  props.set('offsets.topic.replication.factor', '1'); props.set('transaction.state.log.replication.factor', '1');
  props.set('transaction.state.log.min.isr', '1'); props.set('share.coordinator.state.topic.replication.factor', '1');
  const server: ServerHandle = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(), config: parseBrokerConfig(props) });
  const bootstrap = `127.0.0.1:${server.listeners[0]!.port}`;
  const client = new ClusterClient({ bootstrap });
  try { await fn(client, bootstrap); } finally { client.close(); await server.close(); }
}

function resourceName(kind: ConfigKind): string {
  return kind === 'broker' ? '1' : kind === 'topic' ? 'walk' : kind === 'group' ? 'walk-group' : 'walk-subscription';
}

test('every Kafka key through AlterConfigs and IncrementalAlterConfigs (validate only) and DescribeConfigs: accepted, or INVALID_CONFIG with a reason', { timeout: 120_000 }, async () => {
  await withServer(async (client) => {
    const created = await client.admin(ApiKey.CreateTopics, { topics: [{ name: 'walk', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false }, 7);
    assert.equal(created.topics[0].errorCode, 0);
    const kinds: [ConfigKind, string[]][] = [['broker', KAFKA_KEYS.broker], ['topic', KAFKA_KEYS.topic], ['group', KAFKA_KEYS.group], ['client-metrics', KAFKA_KEYS.clientMetrics]];
    for (const [kind, names] of kinds) {
      const resource = { resourceType: Resource[kind], resourceName: resourceName(kind) };
      for (const name of names) {
        const def = keyOf(kind, name);
        const value = def === undefined ? '1' : sampleValue(def);
        const legacy = await client.admin(ApiKey.AlterConfigs, { resources: [{ ...resource, configs: [{ name, value }] }], validateOnly: true }, 2);
        const inc = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ ...resource, configs: [{ name, configOperation: 0, value }] }], validateOnly: true }, 1);
        for (const r of [legacy.responses[0], inc.responses[0]]) {
          if (def === undefined && TIERED.test(name)) continue; // tiered storage's keys are declared with that work
          const expectAccepted = def !== undefined && !(kind === 'broker' && def.dynamic === 'read-only');
          if (expectAccepted) assert.equal(r.errorCode, 0, `${kind} ${name}: ${r.errorMessage}`);
          else {
            assert.equal(r.errorCode, ErrorCode.INVALID_CONFIG, `${kind} ${name}`);
            assert.match(r.errorMessage, def === undefined ? new RegExp(`"${name.replace(/\./g, '\\.')}" is not accepted: ${refusedReason(kind, name)!.replace(/[.()]/g, '\\$&')}`) : /Cannot update these configs dynamically/);
          }
        }
      }
      const described = await client.admin(ApiKey.DescribeConfigs, { resources: [{ ...resource, configurationKeys: null }], includeSynonyms: true, includeDocumentation: true }, 4);
      assert.equal(described.results[0].errorCode, 0, `${kind}: ${described.results[0].errorMessage}`);
      for (const c of described.results[0].configs) {
        const def = keyOf(kind, c.name)!;
        assert.ok(def !== undefined, c.name);
        if (def.unused === true) assert.match(c.documentation, /^Accepted/, c.name);
      }
    }
  });
});

test('unused dynamic keys, once set on the broker and per listener, are described with their dynamic source and say they are unused', { timeout: 60_000 }, async () => {
  await withServer(async (client) => {
    const set = [
      { name: 'sasl.kerberos.min.time.before.relogin', configOperation: 0, value: '58000' },
      { name: 'ssl.keymanager.algorithm', configOperation: 0, value: 'PKIX' },
      { name: 'listener.name.plaintext.sasl.kerberos.service.name', configOperation: 0, value: 'kafka' },
    ];
    const inc = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 4, resourceName: '1', configs: set }], validateOnly: false }, 1);
    assert.equal(inc.responses[0].errorCode, 0, inc.responses[0].errorMessage);
    const atDefault = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 4, resourceName: '', configs: [
      { name: 'sasl.kerberos.kinit.cmd', configOperation: 0, value: '/bin/kinit' }] }], validateOnly: false }, 1);
    assert.equal(atDefault.responses[0].errorCode, ErrorCode.INVALID_CONFIG, 'a per-broker key is refused on the cluster default');
    const group = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 32, resourceName: 'g', configs: [
      { name: 'consumer.session.timeout.ms', configOperation: 0, value: '50000' }] }], validateOnly: false }, 1);
    assert.equal(group.responses[0].errorCode, 0, group.responses[0].errorMessage);
    // Below the broker's group.share.min.session.timeout.ms (45 s by default): refused as Kafka refuses it.
    const short = await client.admin(ApiKey.IncrementalAlterConfigs, { resources: [{ resourceType: 32, resourceName: 'g', configs: [
      { name: 'share.session.timeout.ms', configOperation: 0, value: '30000' }] }], validateOnly: false }, 1);
    assert.equal(short.responses[0].errorCode, ErrorCode.INVALID_CONFIG);
    assert.equal(short.responses[0].errorMessage, 'share.session.timeout.ms must be greater than or equal to group.share.min.session.timeout.ms');
    const waitDescribed = async (resourceType: number, resourceName: string, keys: string[]) => {
      for (let i = 0; ; i++) {
        const d = (await client.admin(ApiKey.DescribeConfigs, { resources: [{ resourceType, resourceName, configurationKeys: keys }], includeSynonyms: true, includeDocumentation: true }, 4)).results[0];
        if (d.configs.length === keys.length && d.configs.every((c: any) => c.configSource !== 5) || i > 50) return d;
        await new Promise((r) => setTimeout(r, 50)); // the broker's metadata view catches up with the commit
      }
    };
    const d = await waitDescribed(4, '1', set.map((s) => s.name));
    for (const s of set) {
      const c = d.configs.find((x: any) => x.name === s.name);
      assert.equal(c.value, s.value, s.name);
      assert.equal(c.configSource, 2, `${s.name}: DYNAMIC_BROKER_CONFIG`);
      assert.match(c.documentation, /^Accepted, not used/);
    }
    const svc = d.configs.find((x: any) => x.name === 'listener.name.plaintext.sasl.kerberos.service.name');
    // server.properties set the base key (serverProperties), so it follows as the static synonym.
    assert.deepEqual(svc.synonyms.map((s: any) => [s.name, s.source]), [['listener.name.plaintext.sasl.kerberos.service.name', 2], ['sasl.kerberos.service.name', 4]]);
    const g = await waitDescribed(32, 'g', ['consumer.session.timeout.ms']);
    assert.equal(g.configs[0].value, '50000');
    assert.equal(g.configs[0].configSource, 8, 'GROUP_CONFIG');
  });
});

const hasConfluentKafka = spawnSync(PYTHON, ['-c', 'import confluent_kafka.admin']).status === 0;
function skipConfluent(): string | false {
  if (hasConfluentKafka) return false;
  if (process.env.CI) throw new Error('python3-confluent-kafka is missing in CI (apt-get install -y python3-confluent-kafka)');
  return 'python3-confluent-kafka is not installed (apt-get install -y python3-confluent-kafka)';
}

// librdkafka's admin test (0081-admin.c, do_test_AlterConfigs) sets this key on the BROKER resource.
const ALTER_BROKER = `
import json, sys
from confluent_kafka.admin import AdminClient, ConfigResource
admin = AdminClient({'bootstrap.servers': sys.argv[1]})
resource = ConfigResource('broker', '1', set_config={'sasl.kerberos.min.time.before.relogin': '58000'})
for f in admin.alter_configs([resource], request_timeout=10).values():
    f.result()
described = list(admin.describe_configs([ConfigResource('broker', '1')], request_timeout=10).values())[0].result()
entry = described['sasl.kerberos.min.time.before.relogin']
print(json.dumps({'value': entry.value, 'source': getattr(entry.source, 'value', entry.source)}))
`;

test('confluent-kafka-python (librdkafka) AlterConfigs on the BROKER resource with sasl.kerberos.min.time.before.relogin succeeds', { skip: skipConfluent(), timeout: 60_000 }, async () => {
  await withServer(async (_client, bootstrap) => {
    // Asynchronously: the server runs on this process's event loop.
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(PYTHON, ['-c', ALTER_BROKER, bootstrap], { timeout: 30_000 });
      let stdout = ''; let stderr = '';
      child.stdout.on('data', (d) => { stdout += d; });
      child.stderr.on('data', (d) => { stderr += d; });
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
    assert.equal(run.status, 0, run.stderr);
    const out = JSON.parse(run.stdout.trim().split('\n').pop()!);
    assert.equal(out.value, '58000');
    assert.equal(out.source, 2, 'DYNAMIC_BROKER_CONFIG');
  });
});
