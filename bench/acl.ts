// The authorizer's cost on the produce path: two brokers in this process, one with
// authorizer.class.name and 10,000 ACLs, one without, and librdkafka's producer in C
// (bench/rdkafka-perf.c) sending 1 KiB records to each in turn, alternating, so both see the same
// machine load. The producer's principal (User:ANONYMOUS on PLAINTEXT) is granted by a PREFIXED
// ACL among 10,000 others, a thousand of them on the very topic for other users; the admin that
// creates them is a super user over mTLS. The ratio is the target (on >= 95% of off).
// JSON on stdout.
//   node dist/bench/acl.js [--records 300000] [--rounds 2] [--acks 1] [--acls 10000]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startServer } from '../src/node/index.js';
import { parseBrokerConfig } from '../src/config/index.js';
import { AclOperation, AclPermissionType, CLUSTER_RESOURCE_NAME, PatternType, ResourceType, writeDevCerts } from '../src/security/index.js';
import { ClusterClient } from '../src/client/index.js';
import { ApiKey } from '../src/protocol/index.js';
import { runRdkafkaPerf } from './rdkafka-perf.js';
import { authorizeRequest, bindAuthz } from '../src/broker/authorization.js';
import { AclIndex } from '../src/security/index.js';
import { AclsImage } from '../src/metadata/index.js';

const args = process.argv.slice(2);
const arg = (name: string, dflt: string) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1]! : dflt; };
const records = Number(arg('--records', '300000'));
const rounds = Number(arg('--rounds', '2'));
const acks = Number(arg('--acks', '1'));
const aclCount = Number(arg('--acls', '10000'));
const size = 1024;
const TOPIC = 'acl-bench';

/** The ACLs: the producer's grants, then others' ACLs up to `aclCount` (literal, prefixed, and on the bench topic itself). */
function bindings(): object[] {
  const allow = (resourceType: number, resourceName: string, patternType: number, principal: string, operation: number) =>
    ({ resourceType, resourceName, resourcePatternType: patternType, principal, host: '*', operation, permissionType: AclPermissionType.ALLOW });
  const out = [
    allow(ResourceType.TOPIC, 'acl-', PatternType.PREFIXED, 'User:ANONYMOUS', AclOperation.WRITE),
    allow(ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME, PatternType.LITERAL, 'User:ANONYMOUS', AclOperation.CREATE),
    allow(ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME, PatternType.LITERAL, 'User:ANONYMOUS', AclOperation.IDEMPOTENT_WRITE),
  ];
  for (let i = 0; out.length < aclCount; i++) {
    const user = `User:u${i % 500}`;
    if (i % 10 === 0) out.push(allow(ResourceType.TOPIC, TOPIC, PatternType.LITERAL, `User:other${i}`, AclOperation.READ));
    else if (i % 2 === 0) out.push(allow(ResourceType.TOPIC, `topic-${i}`, PatternType.LITERAL, user, AclOperation.WRITE));
    else out.push(allow(ResourceType.TOPIC, `prefix-${i}-`, PatternType.PREFIXED, user, AclOperation.READ));
  }
  return out;
}

/**
 * What the router adds to one Produce request of 6 partitions of one topic when the decisions are
 * cached (the steady state): binding the caller, the rule, the lookups. Nanoseconds per request,
 * over an index of the same ACLs.
 */
function checkCostNs(all: any[]): { cached: number; firstOnNewIndex: number } {
  const image = new AclsImage(new Map(all.map((a, i) => [`id${i}`, { id: `id${i}`, resourceType: a.resourceType, resourceName: a.resourceName,
    patternType: a.resourcePatternType, principal: a.principal, host: a.host, operation: a.operation, permissionType: a.permissionType }])));
  const settings = { superUsers: new Set<string>(), allowEveryoneIfNoAclFound: false };
  const request = { transactionalId: null, acks: 1, timeoutMs: 30000, topicData: [{ name: TOPIC, partitionData: Array.from({ length: 6 }, (_, index) => ({ index, records: null })) }] };
  const ctx = { apiVersion: 9 } as any;
  const fresh = () => { const t0 = process.hrtime.bigint(); authorizeRequest(0, request, bindAuthz(new AclIndex(image, settings), 'User:ANONYMOUS', '127.0.0.1'), ctx); return Number(process.hrtime.bigint() - t0); };
  const firstOnNewIndex = Math.min(fresh(), fresh(), fresh());
  const index = new AclIndex(image, settings);
  const n = 1_000_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    if (authorizeRequest(0, request, bindAuthz(index, 'User:ANONYMOUS', '127.0.0.1'), ctx) !== undefined) throw new Error('refused');
  }
  return { cached: Number((Number(process.hrtime.bigint() - t0) / n).toFixed(1)), firstOnNewIndex };
}

const dir = mkdtempSync(join(tmpdir(), 'logline-bench-acl-'));
try {
  const certs = writeDevCerts(join(dir, 'certs'));
  const common = {
    'listeners': 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0', 'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SSL:SSL',
    'num.partitions': '6', 'http.listener': '',
    'ssl.keystore.type': 'PEM', 'ssl.keystore.location': join(certs.dir, 'broker.pem'),
    'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs.caCert, 'listener.name.ssl.ssl.client.auth': 'required',
    'ssl.principal.mapping.rules': 'RULE:^CN=([^,]+),O=Logline dev$/$1/L,DEFAULT',
  };
  const on = await startServer({ dataDir: join(dir, 'on'), config: parseBrokerConfig({ 'node.id': '1', ...common,
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', 'super.users': 'User:localhost' }) });
  const off = await startServer({ dataDir: join(dir, 'off'), config: parseBrokerConfig({ 'node.id': '1', ...common }) });
  const port = (s: typeof on, name: string) => s.listeners.find((l) => l.name === name)!.port;
  const admin = new ClusterClient({ bootstrap: `127.0.0.1:${port(on, 'SSL')}`, tls: {
    ca: readFileSync(certs.caCert), cert: readFileSync(join(certs.dir, 'broker.crt')), key: readFileSync(join(certs.dir, 'broker.key')), servername: 'localhost' } });
  const all = bindings();
  for (let i = 0; i < all.length; i += 1000) {
    const r = await admin.admin(ApiKey.CreateAcls, { creations: all.slice(i, i + 1000) }, 3);
    const bad = r.results.find((x: { errorCode: number }) => x.errorCode !== 0);
    if (bad) throw new Error(`CreateAcls: ${JSON.stringify(bad)}`);
  }
  admin.close();
  const runs: { authorizer: string; recordsPerSec: number; mbPerSec: number; seconds: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const [authorizer, server] of [['off', off], ['on', on]] as const) {
      const r = await runRdkafkaPerf({ bootstrap: `127.0.0.1:${port(server, 'PLAINTEXT')}`, topic: TOPIC, records, size, acks, compression: 'none', maxSeconds: 300 });
      if (r.error) throw new Error(`authorizer ${authorizer}: ${r.error}`);
      runs.push({ authorizer, ...r });
    }
  }
  await on.close();
  await off.close();
  const perCheck = checkCostNs(all);
  const best = (a: string) => Math.max(...runs.filter((r) => r.authorizer === a).map((r) => r.recordsPerSec));
  console.log(JSON.stringify({
    bench: 'authorizer-produce', acls: all.length, recordBytes: size, records, acks, rounds, runs,
    offRecordsPerSecBest: best('off'), onRecordsPerSecBest: best('on'),
    onShareOfOff: Number((best('on') / best('off')).toFixed(3)), target: 0.95,
    produceRequestCheckNs: perCheck,
  }, null, 2));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
