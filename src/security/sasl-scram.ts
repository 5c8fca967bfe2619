// SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka speaks them: no channel binding,
// user names in saslname form (=2C, =3D), passwords as UTF-8 bytes (Kafka does no SASLprep), the
// `tokenauth` extension refused (no delegation tokens here). Both sides are pure state machines:
// the nonce and the credential lookup come in as inputs, so RFC 7677's test vector replays exactly.
import { createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import { scramCredentialFromSaltedPassword } from '../metadata/index.js';
import { limits } from '../util/index.js';

export type ScramMechanismName = 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

/** Kafka's ScramMechanism ids (UserScramCredentialRecord.mechanism). */
export const SCRAM_MECHANISM_IDS: Readonly<Record<ScramMechanismName, number>> = { 'SCRAM-SHA-256': 1, 'SCRAM-SHA-512': 2 };

export function scramMechanismName(id: number): ScramMechanismName | undefined {
  return id === 1 ? 'SCRAM-SHA-256' : id === 2 ? 'SCRAM-SHA-512' : undefined;
}

export function isScramMechanism(name: string): name is ScramMechanismName {
  return name === 'SCRAM-SHA-256' || name === 'SCRAM-SHA-512';
}

function hashOf(mechanism: ScramMechanismName): 'sha256' | 'sha512' {
  return mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
}

const hmac = (m: ScramMechanismName, key: Buffer, data: Buffer | string): Buffer => createHmac(hashOf(m), key).update(data).digest();
const hash = (m: ScramMechanismName, data: Buffer): Buffer => createHash(hashOf(m)).update(data).digest();

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

export interface ScramKeys {
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
  readonly iterations: number;
}

/** Hi(password, salt, i) of RFC 5802: what AlterUserScramCredentials carries as salted_password. */
export function scramSaltedPassword(mechanism: ScramMechanismName, password: string, salt: Buffer, iterations: number): Buffer {
  return pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, mechanism === 'SCRAM-SHA-256' ? 32 : 64, hashOf(mechanism));
}

/** The stored credential (what UserScramCredentialRecord holds) from a salted password. */
export function scramKeysFromSaltedPassword(mechanism: ScramMechanismName, saltedPassword: Buffer, salt: Buffer, iterations: number): ScramKeys {
  return scramCredentialFromSaltedPassword(SCRAM_MECHANISM_IDS[mechanism], saltedPassword, salt, iterations);
}

/** `=2C` → `,` and `=3D` → `=`; undefined when another `=` escape appears (RFC 5802 §5.1). */
export function saslNameDecode(name: string): string | undefined {
  if (/=(?!2C|3D)/.test(name)) return undefined;
  return name.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

export function saslNameEncode(name: string): string {
  return name.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

/** Attributes of a SCRAM message (`k=v,...`), in order; undefined when malformed. */
function attributes(text: string): [string, string][] | undefined {
  const out: [string, string][] = [];
  for (const part of text.split(',')) {
    if (part.length < 2 || part[1] !== '=' || !/[a-zA-Z]/.test(part[0]!)) return undefined;
    out.push([part[0]!, part.slice(2)]);
  }
  return out;
}

const PRINTABLE_NONCE = /^[\x21-\x2b\x2d-\x7e]+$/;

export type ScramStep =
  | { kind: 'challenge'; message: Buffer }
  | { kind: 'done'; message: Buffer; user: string }
  | { kind: 'failed'; message: string };

/** Kafka's words for every failure the client should not learn more from. */
export const scramInvalidCredentials = (m: ScramMechanismName): string =>
  `Authentication failed during authentication due to invalid credentials with SASL mechanism ${m}`;

/**
 * The server side of one SCRAM exchange. `credential` looks the user up; for an unknown user it
 * returns undefined and the exchange goes on with made-up keys (`decoy`), so it fails at the
 * proof exactly like a wrong password: same messages, same work.
 */
export class ScramServer {
  private state: 'first' | 'final' | 'done' | 'failed' = 'first';
  private user = '';
  private gs2Header = '';
  private nonce = '';
  private keys: ScramKeys | null = null;
  private known = false;
  private clientFirstBare = '';
  private serverFirst = '';

  constructor(
    readonly mechanism: ScramMechanismName,
    private readonly credential: (user: string) => ScramKeys | undefined,
    private readonly decoy: (user: string) => ScramKeys,
    private readonly serverNonce: () => string,
  ) {}

  step(token: Buffer): ScramStep {
    if (this.state === 'first') return this.onClientFirst(token.toString('utf8'));
    if (this.state === 'final') return this.onClientFinal(token.toString('utf8'));
    return this.fail('Authentication failed: unexpected SCRAM message after the exchange ended');
  }

  private fail(message: string): ScramStep {
    this.state = 'failed';
    return { kind: 'failed', message };
  }

  private onClientFirst(text: string): ScramStep {
    const m = /^([ny]),(a=[^,]*)?,(.*)$/s.exec(text);
    if (m === null) return this.fail('Authentication failed: invalid SCRAM client-first message (channel binding is not supported)');
    // Extensions (Kafka's `tokenauth=true` for delegation tokens) follow the nonce.
    const [userAttr, nonceAttr, ...extensions] = m[3]!.split(',');
    if (userAttr === undefined || nonceAttr === undefined || !userAttr.startsWith('n=') || !nonceAttr.startsWith('r=')) {
      return this.fail('Authentication failed: invalid SCRAM client-first message');
    }
    const user = saslNameDecode(userAttr.slice(2));
    const clientNonce = nonceAttr.slice(2);
    if (user === undefined || user.length === 0 || user.length > limits.scramUserNameCharsMax) return this.fail('Authentication failed: invalid SCRAM user name');
    if (!PRINTABLE_NONCE.test(clientNonce)) return this.fail('Authentication failed: invalid SCRAM nonce');
    if (extensions.some((e) => e.startsWith('tokenauth='))) return this.fail('Authentication failed: delegation tokens are not supported');
    const authzid = m[2] === undefined ? '' : saslNameDecode(m[2].slice(2));
    if (authzid === undefined || (authzid.length > 0 && authzid !== user)) {
      return this.fail('Authentication failed: Client requested an authorization id that is different from username');
    }
    // The decoy is made for known users too, so both paths do the same work.
    const decoy = this.decoy(user);
    const found = this.credential(user);
    this.known = found !== undefined;
    this.keys = found ?? decoy;
    this.user = user;
    this.gs2Header = `${m[1]},${m[2] ?? ''},`;
    this.nonce = clientNonce + this.serverNonce();
    this.clientFirstBare = m[3]!;
    this.serverFirst = `r=${this.nonce},s=${this.keys.salt.toString('base64')},i=${this.keys.iterations}`;
    this.state = 'final';
    return { kind: 'challenge', message: Buffer.from(this.serverFirst, 'utf8') };
  }

  private onClientFinal(text: string): ScramStep {
    const attrs = attributes(text);
    if (attrs === undefined || attrs.length < 3 || attrs[0]![0] !== 'c' || attrs[1]![0] !== 'r' || attrs[attrs.length - 1]![0] !== 'p') {
      return this.fail('Authentication failed: invalid SCRAM client-final message');
    }
    const channel = attrs[0]![1];
    const nonce = attrs[1]![1];
    const proof = Buffer.from(attrs[attrs.length - 1]![1], 'base64');
    if (channel !== Buffer.from(this.gs2Header, 'utf8').toString('base64')) return this.fail('Authentication failed: invalid SCRAM channel binding');
    // Kafka accepts a final nonce that ends with ours: librdkafka (through at least 2.0) sends its
    // client nonce again in front of the combined one.
    if (!nonce.endsWith(this.nonce)) return this.fail('Authentication failed: invalid SCRAM nonce');
    const keys = this.keys!;
    const withoutProof = text.slice(0, text.lastIndexOf(',p='));
    const authMessage = `${this.clientFirstBare},${this.serverFirst},${withoutProof}`;
    const clientSignature = hmac(this.mechanism, keys.storedKey, authMessage);
    const ok = proof.length === clientSignature.length
      && timingSafeEqual(hash(this.mechanism, xor(proof, clientSignature)), keys.storedKey);
    if (!ok || !this.known) return this.fail(scramInvalidCredentials(this.mechanism));
    this.state = 'done';
    const serverSignature = hmac(this.mechanism, keys.serverKey, authMessage);
    return { kind: 'done', message: Buffer.from(`v=${serverSignature.toString('base64')}`, 'utf8'), user: this.user };
  }
}

/** The client side: first() then final(serverFirst), then verify(serverFinal). */
export class ScramClient {
  private clientFirstBare = '';
  private serverSignature: Buffer | null = null;

  constructor(readonly mechanism: ScramMechanismName, private readonly user: string, private readonly password: string, private readonly clientNonce: string) {}

  first(): Buffer {
    this.clientFirstBare = `n=${saslNameEncode(this.user)},r=${this.clientNonce}`;
    return Buffer.from(`n,,${this.clientFirstBare}`, 'utf8');
  }

  final(serverFirstBytes: Buffer): Buffer {
    const serverFirst = serverFirstBytes.toString('utf8');
    const attrs = new Map(attributes(serverFirst) ?? []);
    const nonce = attrs.get('r');
    const salt = attrs.get('s');
    const iterations = Number(attrs.get('i'));
    if (nonce === undefined || !nonce.startsWith(this.clientNonce) || salt === undefined || !Number.isInteger(iterations)) {
      throw new Error(`SCRAM: invalid server-first message ${JSON.stringify(serverFirst)}`);
    }
    if (iterations < limits.scramIterationsMin || iterations > limits.scramIterationsMax) throw new Error(`SCRAM: server asks for ${iterations} iterations`);
    const salted = scramSaltedPassword(this.mechanism, this.password, Buffer.from(salt, 'base64'), iterations);
    const clientKey = hmac(this.mechanism, salted, 'Client Key');
    const withoutProof = `c=biws,r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`;
    const proof = xor(clientKey, hmac(this.mechanism, hash(this.mechanism, clientKey), authMessage));
    this.serverSignature = hmac(this.mechanism, hmac(this.mechanism, salted, 'Server Key'), authMessage);
    return Buffer.from(`${withoutProof},p=${proof.toString('base64')}`, 'utf8');
  }

  /** Throws unless the server proved it knows the credential. */
  verify(serverFinalBytes: Buffer): void {
    const text = serverFinalBytes.toString('utf8');
    if (!text.startsWith('v=') || this.serverSignature === null || !Buffer.from(text.slice(2), 'base64').equals(this.serverSignature)) {
      throw new Error(`SCRAM: the server's signature does not match (${text.startsWith('e=') ? text : 'invalid server-final message'})`);
    }
  }
}
