// `logline security dev-certs DIR`: a throwaway CA, a broker certificate for localhost and
// 127.0.0.1, and a client certificate, for tests and quick starts. Node's crypto makes keys but
// cannot sign certificates, so the system's openssl does the work (nothing is downloaded).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface DevCerts {
  readonly dir: string;
  readonly caCert: string;
  readonly brokerCert: string;
  readonly brokerKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** PKCS12 keystores (password `devPassword`) and a PKCS12 truststore with the CA. */
  readonly brokerKeystoreP12: string;
  readonly clientKeystoreP12: string;
  readonly truststoreP12: string;
  readonly devPassword: string;
}

const DAYS = '825';

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    if (err.code === 'ENOENT') throw new Error('dev-certs needs the system\'s openssl (not found on PATH)');
    throw new Error(`openssl ${args[0]}: ${err.stderr?.toString().trim() ?? err.message}`);
  }
}

function leaf(dir: string, name: string, subject: string, ext: string): void {
  openssl(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], dir);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', DAYS, '-sha256', '-out', `${name}.crt`, '-extfile', `${name}.ext`], dir);
  rmSync(join(dir, `${name}.csr`));
  rmSync(join(dir, `${name}.ext`));
}

/** Writes ca.crt/ca.key, broker.crt/broker.key (+ broker.pem: chain and key), client.crt/client.key, and PKCS12 stores. */
export function writeDevCerts(dir: string, options: { clientName?: string; devPassword?: string } = {}): DevCerts {
  const clientName = options.clientName ?? 'client';
  const devPassword = options.devPassword ?? 'logline-dev';
  mkdirSync(dir, { recursive: true });
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', DAYS, '-sha256',
    '-subj', '/O=Logline dev/CN=Logline dev CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  leaf(dir, 'broker', '/O=Logline dev/CN=localhost',
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n');
  leaf(dir, 'client', `/O=Logline dev/CN=${clientName}`,
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  const pass = `pass:${devPassword}`;
  openssl(['pkcs12', '-export', '-in', 'broker.crt', '-inkey', 'broker.key', '-certfile', 'ca.crt', '-name', 'broker', '-out', 'broker.p12', '-passout', pass], dir);
  openssl(['pkcs12', '-export', '-in', 'client.crt', '-inkey', 'client.key', '-certfile', 'ca.crt', '-name', 'client', '-out', 'client.p12', '-passout', pass], dir);
  openssl(['pkcs12', '-export', '-nokeys', '-in', 'ca.crt', '-out', 'truststore.p12', '-passout', pass], dir);
  writeFileSync(join(dir, 'broker.pem'), Buffer.concat([readFileSync(join(dir, 'broker.crt')), readFileSync(join(dir, 'broker.key'))]));
  const p = (f: string): string => join(dir, f);
  return {
    dir, caCert: p('ca.crt'), brokerCert: p('broker.crt'), brokerKey: p('broker.key'), clientCert: p('client.crt'), clientKey: p('client.key'),
    brokerKeystoreP12: p('broker.p12'), clientKeystoreP12: p('client.p12'), truststoreP12: p('truststore.p12'), devPassword,
  };
}
