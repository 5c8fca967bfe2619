// TLS listeners with real clients: kcat (librdkafka), confluent-kafka-python, kafka-python and
// kafkajs produce and consume over SSL next to a PLAINTEXT listener; mTLS maps the client
// certificate to a principal; plaintext, garbage and untrusted certificates are refused while the
// broker keeps serving; a new keystore is picked up without a restart; a cluster whose
// inter-broker and controller listeners are SSL replicates.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';
import { startServer, type ServerHandle } from '../../src/broker/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { writeDevCerts, type DevCerts } from '../../src/security/index.js';

const hasKcat = spawnSync('kcat', ['-V']).status === 0;
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const PYTHON = '/usr/bin/python3'; // Debian's python3-kafka and python3-confluent-kafka are seen by the system python
const hasPy = (mod: string) => spawnSync(PYTHON, ['-c', `import ${mod}`]).status === 0;
if (process.env.CI && (!hasKcat || !hasOpenssl)) throw new Error('kcat and openssl are needed in CI');

let certs: DevCerts;
let rogue: DevCerts; // a second CA nobody trusts
before(() => {
  if (!hasOpenssl) return;
  const dir = mkdtempSync(join(tmpdir(), 'logline-tls-'));
  certs = writeDevCerts(join(dir, 'good'), { clientName: 'alice' });
  rogue = writeDevCerts(join(dir, 'rogue'), { clientName: 'mallory' });
});

interface Broker { server: ServerHandle; plain: string; ssl: string; logs: string[] }

async function broker(extra: Record<string, string> = {}): Promise<Broker> {
  const logs: string[] = [];
  const log = (m: string) => { logs.push(m); };
  const config = parseBrokerConfig({
    'node.id': '1',
    'listeners': 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SSL:SSL',
    'listener.name.ssl.ssl.keystore.type': 'PEM',
    'listener.name.ssl.ssl.keystore.location': join(certs.dir, 'broker.pem'),
    'listener.name.ssl.ssl.truststore.type': 'PEM',
    'listener.name.ssl.ssl.truststore.location': certs.caCert,
    'num.partitions': '1',
    ...extra,
  });
  const server = await startServer({ config, dataDir: tempDataDir(), logger: { info: log, warn: log, error: log } });
  const port = (name: string) => server.listeners.find((l) => l.name === name)!.port;
  return { server, plain: `127.0.0.1:${port('PLAINTEXT')}`, ssl: `127.0.0.1:${port('SSL')}`, logs };
}

const kcatSsl = (bootstrap: string, ...more: string[]) => ['-b', bootstrap, '-X', 'security.protocol=SSL', '-X', `ssl.ca.location=${certs.caCert}`, ...more];
const kcatMtls = (bootstrap: string, c: DevCerts = certs) => kcatSsl(bootstrap, '-X', `ssl.certificate.location=${c.clientCert}`, '-X', `ssl.key.location=${c.clientKey}`);

async function kcatRoundTrip(args: string[], topic: string, n: number): Promise<string[]> {
  const lines = Array.from({ length: n }, (_, i) => `k${i}:v${i}`).join('\n') + '\n';
  const p = await runProcess('kcat', ['-P', ...args, '-t', topic, '-K', ':', '-X', 'acks=all'], lines);
  assert.equal(p.code, 0, p.stderr);
  const c = await runProcess('kcat', ['-C', ...args, '-t', topic, '-o', 'beginning', '-c', String(n), '-e', '-q', '-f', '%k=%s@%o\\n']);
  assert.equal(c.code, 0, c.stderr);
  return c.stdout.trim().split('\n');
}

const skipNoKcat = !hasOpenssl ? 'openssl is not installed' : hasKcat ? false : 'kcat is not installed';

test('kcat produces and consumes over the SSL listener while the PLAINTEXT listener serves the same topic', { skip: skipNoKcat, timeout: 60_000 }, async () => {
  const b = await broker();
  try {
    const rows = await kcatRoundTrip(kcatSsl(b.ssl), 'tls-kcat', 200);
    assert.deepEqual(rows, Array.from({ length: 200 }, (_, i) => `k${i}=v${i}@${i}`));
    // The same records over PLAINTEXT, and metadata over SSL advertises the SSL listener.
    const c = await runProcess('kcat', ['-C', '-b', b.plain, '-t', 'tls-kcat', '-o', 'beginning', '-c', '200', '-e', '-q', '-f', '%s\\n']);
    assert.equal(c.stdout.trim().split('\n').length, 200);
    const meta = JSON.parse((await runProcess('kcat', ['-L', '-J', ...kcatSsl(b.ssl)])).stdout);
    assert.equal(meta.brokers[0].name, b.ssl);
  } finally {
    await b.server.close();
  }
});
