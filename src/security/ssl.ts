// TLS settings of a listener (server side) and of the broker's own outgoing connections (client
// side), from Kafka's ssl.* keys: keystores in PEM (inline or a file) or PKCS12, truststores in PEM
// or PKCS12, client authentication, protocol versions and cipher suites. Kafka's JKS is Java's own
// format and refused with a message saying what to use instead.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { SecureContextOptions, ConnectionOptions, TlsOptions } from 'node:tls';
import { parsePrincipalMappingRules } from './principal.js';

export class SslConfigError extends Error {
  override name = 'SslConfigError';
}

/** Reads one ssl.* key (already resolved for a listener: listener.name.<l>.ssl.* first). */
export type SslValue = (key: string) => unknown;

export type ClientAuth = 'none' | 'requested' | 'required';

export interface ListenerTls {
  /** Options for tls.createServer / setSecureContext. */
  readonly server: TlsOptions;
  readonly clientAuth: ClientAuth;
  readonly principalRules: ReturnType<typeof parsePrincipalMappingRules>;
}

const IANA_TO_OPENSSL: Readonly<Record<string, string>> = {
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
  TLS_DHE_RSA_WITH_AES_128_GCM_SHA256: 'DHE-RSA-AES128-GCM-SHA256',
  TLS_DHE_RSA_WITH_AES_256_GCM_SHA384: 'DHE-RSA-AES256-GCM-SHA384',
};

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/**
 * PEM blocks of one kind, rewrapped: Kafka accepts inline PEM with its line breaks lost (a value
 * on one properties line), OpenSSL does not.
 */
function pemBlocks(text: string, kind: RegExp): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g)) {
    if (!kind.test(m[1]!)) continue;
    const body = m[2]!.replace(/\s+/g, '').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
    out.push(`-----BEGIN ${m[1]}-----\n${body}\n-----END ${m[1]}-----\n`);
  }
  return out;
}

function readFile(path: string, key: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new SslConfigError(`${key} ${path}: ${(e as Error).message}`);
  }
}

function keystoreOptions(get: SslValue): SecureContextOptions {
  const type = String(get('ssl.keystore.type')).toUpperCase();
  const location = str(get('ssl.keystore.location'));
  const chain = str(get('ssl.keystore.certificate.chain'));
  const key = str(get('ssl.keystore.key'));
  const keyPassword = str(get('ssl.key.password'));
  if (chain !== null || key !== null) {
    if (type !== 'PEM') throw new SslConfigError('ssl.keystore.certificate.chain and ssl.keystore.key need ssl.keystore.type=PEM');
    if (chain === null || key === null) throw new SslConfigError('ssl.keystore.certificate.chain and ssl.keystore.key must be set together');
    if (location !== null) throw new SslConfigError('ssl.keystore.location must not be set with an inline PEM keystore');
    return pemKeystore(chain, key, keyPassword, 'ssl.keystore.certificate.chain');
  }
  if (location === null) throw new SslConfigError('a TLS listener needs a keystore: ssl.keystore.location, or ssl.keystore.certificate.chain and ssl.keystore.key');
  const bytes = readFile(location, 'ssl.keystore.location');
  if (type === 'PEM') return pemKeystore(bytes.toString('latin1'), bytes.toString('latin1'), keyPassword, `ssl.keystore.location ${location}`);
  if (type === 'PKCS12') {
    const password = str(get('ssl.keystore.password'));
    return { pfx: bytes, ...(password !== null ? { passphrase: keyPassword ?? password } : {}) };
  }
  throw new SslConfigError(`ssl.keystore.type=${type} is Java's own format; convert it to PKCS12 (keytool -importkeystore -deststoretype PKCS12) or PEM`);
}

function pemKeystore(chainText: string, keyText: string, password: string | null, what: string): SecureContextOptions {
  const cert = pemBlocks(chainText, /CERTIFICATE$/);
  const key = pemBlocks(keyText, /PRIVATE KEY$/);
  if (cert.length === 0) throw new SslConfigError(`${what}: no PEM certificate found`);
  if (key.length !== 1) throw new SslConfigError(`${what}: expected one PEM private key, found ${key.length}`);
  return { cert: cert.join(''), key: key[0]!, ...(password !== null ? { passphrase: password } : {}) };
}

/** Trusted CA certificates (PEM text), or null for Node's default roots. */
function truststore(get: SslValue): string | null {
  const type = String(get('ssl.truststore.type')).toUpperCase();
  const inline = str(get('ssl.truststore.certificates'));
  const location = str(get('ssl.truststore.location'));
  if (inline !== null) {
    if (type !== 'PEM') throw new SslConfigError('ssl.truststore.certificates needs ssl.truststore.type=PEM');
    return pemBlocks(inline, /CERTIFICATE$/).join('');
  }
  if (location === null) return null;
  if (type === 'PEM') {
    const certs = pemBlocks(readFile(location, 'ssl.truststore.location').toString('latin1'), /CERTIFICATE$/);
    if (certs.length === 0) throw new SslConfigError(`ssl.truststore.location ${location}: no PEM certificate found`);
    return certs.join('');
  }
  if (type === 'PKCS12') return pkcs12Certificates(location, str(get('ssl.truststore.password')) ?? '');
  throw new SslConfigError(`ssl.truststore.type=${type} is Java's own format; convert it to PKCS12 or PEM`);
}

/**
 * The certificates of a PKCS12 truststore. Node reads PKCS12 only as a keystore (pfx), so the
 * system's openssl lists them; a truststore is read at start and on reload, never per connection.
 */
function pkcs12Certificates(location: string, password: string): string {
  readFile(location, 'ssl.truststore.location');
  let out: string;
  try {
    out = execFileSync('openssl', ['pkcs12', '-in', location, '-nokeys', '-passin', 'stdin'], { input: `${password}\n`, stdio: ['pipe', 'pipe', 'pipe'] }).toString('latin1');
  } catch (e) {
    throw new SslConfigError(`ssl.truststore.location ${location}: PKCS12 truststores are read with the system's openssl: ${(e as Error).message.split('\n')[0]}`);
  }
  const certs = pemBlocks(out, /CERTIFICATE$/);
  if (certs.length === 0) throw new SslConfigError(`ssl.truststore.location ${location}: no certificate in the PKCS12 store`);
  return certs.join('');
}

function protocolOptions(get: SslValue): Pick<SecureContextOptions, 'minVersion' | 'maxVersion' | 'ciphers'> {
  const enabled = (get('ssl.enabled.protocols') as readonly string[]).map((p) => p.trim());
  if (enabled.length === 0) throw new SslConfigError('ssl.enabled.protocols is empty');
  const versions = enabled.map((p) => {
    if (p !== 'TLSv1.2' && p !== 'TLSv1.3') throw new SslConfigError(`ssl.enabled.protocols: ${p} is not supported (TLSv1.2, TLSv1.3)`);
    return p;
  }).sort();
  const suites = (get('ssl.cipher.suites') as readonly string[]).map((c) => IANA_TO_OPENSSL[c.trim()] ?? c.trim()).filter((c) => c !== '');
  return { minVersion: versions[0]!, maxVersion: versions[versions.length - 1]!, ...(suites.length > 0 ? { ciphers: suites.join(':') } : {}) };
}

/** A TLS listener's settings; throws SslConfigError naming the key at fault. */
export function listenerTls(get: SslValue): ListenerTls {
  const clientAuth = String(get('ssl.client.auth')) as ClientAuth;
  const ca = truststore(get);
  if (clientAuth !== 'none' && ca === null) throw new SslConfigError(`ssl.client.auth=${clientAuth} needs a truststore (ssl.truststore.location or ssl.truststore.certificates)`);
  return {
    server: {
      ...keystoreOptions(get), ...protocolOptions(get), ...(ca !== null ? { ca } : {}),
      // "requested": a certificate is asked for but optional; one that is offered must still be
      // trusted (NetworkServer refuses it after the handshake), as Java's wantClientAuth does.
      requestCert: clientAuth !== 'none', rejectUnauthorized: clientAuth === 'required',
    },
    clientAuth,
    principalRules: parsePrincipalMappingRules(String(get('ssl.principal.mapping.rules') ?? 'DEFAULT')),
  };
}

/**
 * The broker's own TLS client settings towards another broker's or a controller's listener: its
 * keystore (for listeners that ask for a certificate) and its truststore; the server's certificate
 * must name the host unless ssl.endpoint.identification.algorithm is empty.
 */
export function clientTls(get: SslValue): ConnectionOptions {
  const ca = truststore(get);
  const hasKeystore = str(get('ssl.keystore.location')) !== null || str(get('ssl.keystore.certificate.chain')) !== null;
  const verifyHost = str(get('ssl.endpoint.identification.algorithm')) !== null;
  return {
    ...(hasKeystore ? keystoreOptions(get) : {}), ...protocolOptions(get), ...(ca !== null ? { ca } : {}),
    rejectUnauthorized: true,
    ...(verifyHost ? {} : { checkServerIdentity: () => undefined }),
  };
}
