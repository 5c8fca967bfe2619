// `logline security dev-certs DIR`: the files it writes form a chain openssl accepts, the broker
// certificate names localhost and 127.0.0.1, and the PKCS12 stores open with the printed password.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const BIN = 'bin/logline.js';
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

test('security dev-certs writes a CA, a localhost broker certificate and a client certificate that verify', { skip: hasOpenssl ? false : 'openssl is not installed' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'logline-devcerts-'));
  try {
    const r = spawnSync(process.execPath, [BIN, 'security', 'dev-certs', dir, '--client-name', 'bob', '--json'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    for (const f of ['ca.crt', 'broker.crt', 'broker.key', 'broker.pem', 'client.crt', 'client.key', 'broker.p12', 'client.p12', 'truststore.p12']) {
      assert.ok(existsSync(join(dir, f)), f);
    }
    for (const cert of ['broker.crt', 'client.crt']) {
      const v = spawnSync('openssl', ['verify', '-CAfile', join(dir, 'ca.crt'), join(dir, cert)], { encoding: 'utf8' });
      assert.equal(v.status, 0, v.stderr);
    }
    const text = spawnSync('openssl', ['x509', '-in', join(dir, 'broker.crt'), '-noout', '-ext', 'subjectAltName'], { encoding: 'utf8' }).stdout;
    assert.match(text, /DNS:localhost/);
    assert.match(text, /IP Address:127\.0\.0\.1/);
    const subject = spawnSync('openssl', ['x509', '-in', join(dir, 'client.crt'), '-noout', '-subject', '-nameopt', 'RFC2253'], { encoding: 'utf8' }).stdout;
    assert.match(subject, /CN=bob,O=Logline dev/);
    const p12 = spawnSync('openssl', ['pkcs12', '-in', out.brokerKeystoreP12, '-nokeys', '-passin', `pass:${out.devPassword}`], { encoding: 'utf8' });
    assert.equal(p12.status, 0, p12.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('security without a verb prints its usage and exits 2', () => {
  const r = spawnSync(process.execPath, [BIN, 'security'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stdout, /dev-certs DIR/);
});
