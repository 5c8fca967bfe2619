// The SASL mechanisms without sockets: SCRAM against RFC 7677's test vector, the server's refusals
// (wrong proof, unknown user, tampered messages), Kafka's JAAS syntax and PLAIN users,
// OAUTHBEARER's unsecured tokens, and a connection's session (handshake order, KIP-368
// re-authentication that keeps its principal).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  ScramServer, ScramClient, scramKeysFromSaltedPassword, scramSaltedPassword, parseJaasConfig, JaasError, plainUsers, plainAuthenticate,
  plainClientToken, OAuthBearerServer, oauthBearerOptions, oauthBearerClientToken, unsecuredJws, SaslServerSession, parseAddScram,
  saslNameDecode, saslNameEncode, type SaslListenerSettings, type ScramKeys,
} from '../../src/security/index.js';
import { ErrorCode } from '../../src/protocol/index.js';

// RFC 7677 §3: user "user", password "pencil".
const RFC = {
  clientFirst: 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO',
  serverFirst: 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
  clientFinal: 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
  serverFinal: 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=',
};
const rfcSalt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
const rfcKeys = (): ScramKeys => scramKeysFromSaltedPassword('SCRAM-SHA-256', scramSaltedPassword('SCRAM-SHA-256', 'pencil', rfcSalt, 4096), rfcSalt, 4096);
const decoy = (): ScramKeys => scramKeysFromSaltedPassword('SCRAM-SHA-256', Buffer.alloc(32, 7), Buffer.alloc(16, 1), 4096);

test('SCRAM-SHA-256 client and server reproduce RFC 7677 test vector byte for byte', () => {
  const client = new ScramClient('SCRAM-SHA-256', 'user', 'pencil', 'rOprNGfwEbeRWgbNEkqO');
  assert.equal(client.first().toString(), RFC.clientFirst);
  const server = new ScramServer('SCRAM-SHA-256', (u) => (u === 'user' ? rfcKeys() : undefined), decoy, () => '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0');
  const first = server.step(Buffer.from(RFC.clientFirst));
  assert.equal(first.kind, 'challenge');
  assert.equal((first as { message: Buffer }).message.toString(), RFC.serverFirst);
  assert.equal(client.final(Buffer.from(RFC.serverFirst)).toString(), RFC.clientFinal);
  const done = server.step(Buffer.from(RFC.clientFinal));
  assert.deepEqual({ kind: done.kind, user: (done as { user: string }).user, message: (done as { message: Buffer }).message.toString() }, { kind: 'done', user: 'user', message: RFC.serverFinal });
  client.verify(Buffer.from(RFC.serverFinal));
});

function exchange(mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512', user: string, password: string, stored: Map<string, ScramKeys>) {
  const client = new ScramClient(mechanism, user, password, 'clientnonce');
  const server = new ScramServer(mechanism, (u) => stored.get(u), (u) => scramKeysFromSaltedPassword(mechanism, Buffer.from(`decoy-${u}`), Buffer.alloc(32, 3), 4096), () => 'servernonce');
  const first = server.step(client.first());
  assert.equal(first.kind, 'challenge');
  return { first: (first as { message: Buffer }).message.toString(), final: server.step(client.final((first as { message: Buffer }).message)) };
}

test('SCRAM-SHA-512: the right password passes; a wrong password and an unknown user fail alike, at the proof', () => {
  const salt = Buffer.alloc(32, 9);
  const stored = new Map([['alice', scramKeysFromSaltedPassword('SCRAM-SHA-512', scramSaltedPassword('SCRAM-SHA-512', 'alice-secret', salt, 4096), salt, 4096)]]);
  assert.equal(exchange('SCRAM-SHA-512', 'alice', 'alice-secret', stored).final.kind, 'done');
  const wrong = exchange('SCRAM-SHA-512', 'alice', 'nope', stored);
  const unknown = exchange('SCRAM-SHA-512', 'mallory', 'nope', stored);
  assert.deepEqual(wrong.final, unknown.final);
  assert.deepEqual(wrong.final, { kind: 'failed', message: 'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512' });
  // The unknown user's server-first message has the same shape as a real one (salt, iterations).
  assert.match(unknown.first, /^r=clientnonceservernonce,s=[A-Za-z0-9+/]{43}=,i=4096$/);
  assert.match(wrong.first, /^r=clientnonceservernonce,s=[A-Za-z0-9+/]{43}=,i=4096$/);
});

test('SCRAM server refuses a changed nonce, a changed channel binding, channel binding itself and tokenauth', () => {
  const keys = new Map([['user', rfcKeys()]]);
  const start = () => {
    const s = new ScramServer('SCRAM-SHA-256', (u) => keys.get(u), decoy, () => '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0');
    s.step(Buffer.from(RFC.clientFirst));
    return s;
  };
  assert.equal(start().step(Buffer.from(RFC.clientFinal.replace('r=rOpr', 'r=XOpr'))).kind, 'failed');
  assert.equal(start().step(Buffer.from(RFC.clientFinal.replace('c=biws', 'c=eSws'))).kind, 'failed');
  assert.equal(start().step(Buffer.from(RFC.clientFinal.replace('p=dHzb', 'p=eHzb'))).kind, 'failed');
  const fresh = () => new ScramServer('SCRAM-SHA-256', (u) => keys.get(u), decoy, () => 'x');
  assert.equal(fresh().step(Buffer.from('p=tls-unique,,n=user,r=abc')).kind, 'failed');
  assert.equal(fresh().step(Buffer.from('n,,n=user,r=abc,tokenauth=true')).kind, 'failed');
  assert.equal(fresh().step(Buffer.from('n,a=other,n=user,r=abc')).kind, 'failed');
  assert.equal(fresh().step(Buffer.from('n,,n=bad=user,r=abc')).kind, 'failed');
});

test('SCRAM server never throws and answers every random or mutated message with a step', () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 300 }), (a, b) => {
    const s = new ScramServer('SCRAM-SHA-512', () => undefined, (u) => scramKeysFromSaltedPassword('SCRAM-SHA-512', Buffer.from(u), Buffer.alloc(32), 4096), () => 'n');
    const r1 = s.step(Buffer.from(a));
    assert.ok(['challenge', 'failed'].includes(r1.kind));
    assert.ok(['challenge', 'failed', 'done'].includes(s.step(Buffer.from(b)).kind));
  }), { numRuns: 300 });
});

test('saslname escaping round-trips and rejects stray "=" escapes', () => {
  fc.assert(fc.property(fc.string(), (name) => { assert.equal(saslNameDecode(saslNameEncode(name)), name); }));
  assert.equal(saslNameDecode('a=2Cb=3Dc'), 'a,b=c');
  assert.equal(saslNameDecode('a=4'), undefined);
});

test('JAAS parser: Kafka\'s PlainLoginModule entry with quoted, escaped and unquoted values and comments', () => {
  const e = parseJaasConfig(`org.apache.kafka.common.security.plain.PlainLoginModule required
      /* the broker's own login */ username="admin" password="admin-secret"
      user_admin="admin-secret" user_alice="al\\"ice;pw" // comment
      user_bob=bobpw;`);
  assert.equal(e.loginModule, 'org.apache.kafka.common.security.plain.PlainLoginModule');
  assert.equal(e.flag, 'required');
  assert.equal(e.options.get('username'), 'admin');
  assert.deepEqual([...plainUsers(e)], [['admin', 'admin-secret'], ['alice', 'al"ice;pw'], ['bob', 'bobpw']]);
  for (const bad of ['', 'Module', 'Module required', 'Module maybe a="b";', 'Module required a="b"', 'Module required a=;', 'Module required a="b"; Other required;', 'Module required a="unterminated;']) {
    assert.throws(() => parseJaasConfig(bad), JaasError, bad);
  }
});

test('PLAIN: right password passes; wrong password, unknown user, other authzid and malformed messages fail', () => {
  const users = new Map([['alice', 'alice-secret']]);
  assert.deepEqual(plainAuthenticate(plainClientToken('alice', 'alice-secret'), users), { ok: true, user: 'alice' });
  assert.deepEqual(plainAuthenticate(Buffer.from('alice\0alice\0alice-secret'), users), { ok: true, user: 'alice' });
  const wrong = plainAuthenticate(plainClientToken('alice', 'x'), users);
  assert.deepEqual(wrong, plainAuthenticate(plainClientToken('bob', 'x'), users));
  assert.equal(wrong.ok, false);
  assert.equal(plainAuthenticate(Buffer.from('bob\0alice\0alice-secret'), users).ok, false);
  assert.equal(plainAuthenticate(Buffer.from('alice\0alice-secret'), users).ok, false);
});

test('OAUTHBEARER: an unsecured token gives its sub (or the configured claim); expired, signed or malformed ones get invalid_token, then fail', () => {
  const now = 1_800_000_000_000;
  const ok = new OAuthBearerServer(oauthBearerOptions(undefined)).step(oauthBearerClientToken(unsecuredJws({ sub: 'alice', exp: now / 1000 + 60 })), now);
  assert.deepEqual(ok, { kind: 'done', user: 'alice', lifetimeEndMs: now + 60_000 });
  const claim = new OAuthBearerServer(oauthBearerOptions(new Map([['unsecuredValidatorPrincipalClaimName', 'upn']])));
  assert.equal((claim.step(oauthBearerClientToken(unsecuredJws({ sub: 'x', upn: 'bob', exp: now / 1000 + 60 })), now) as { user: string }).user, 'bob');
  const refusals = [
    oauthBearerClientToken(unsecuredJws({ sub: 'alice', exp: now / 1000 - 1 })),
    oauthBearerClientToken(unsecuredJws({ exp: now / 1000 + 60 })),
    oauthBearerClientToken(unsecuredJws({ sub: 'alice', exp: now / 1000 + 60 }) + 'signature'),
    oauthBearerClientToken('not-a-jwt'),
    Buffer.from('garbage'),
  ];
  for (const token of refusals) {
    const s = new OAuthBearerServer(oauthBearerOptions(undefined));
    const first = s.step(token, now);
    assert.equal(first.kind, 'challenge');
    assert.deepEqual(JSON.parse((first as { message: Buffer }).message.toString()), { status: 'invalid_token' });
    assert.equal(s.step(Buffer.from('\u0001'), now).kind, 'failed');
  }
});

const settings = (over: Partial<SaslListenerSettings> = {}): SaslListenerSettings => ({
  mechanisms: ['PLAIN', 'SCRAM-SHA-512', 'OAUTHBEARER'], plainUsers: new Map([['alice', 'pw'], ['bob', 'pw2']]), oauthBearer: oauthBearerOptions(undefined), reauthMs: 0, ...over,
});
const inputs = { scramCredential: () => undefined, scramDecoy: () => decoy(), nonce: () => 'n' };

test('session: nothing but ApiVersions and SASL before authentication; a principal after; a mechanism not enabled fails', () => {
  const s = new SaslServerSession(settings(), inputs);
  assert.equal(s.allows(3, 0), false);
  assert.equal(s.allows(18, 0), true);
  assert.equal(s.handshake('PLAIN', 1).errorCode, ErrorCode.NONE);
  assert.equal(s.authenticate(plainClientToken('alice', 'pw'), 0).errorCode, ErrorCode.NONE);
  assert.equal(s.principal, 'User:alice');
  assert.equal(s.allows(3, 0), true);
  const other = new SaslServerSession(settings(), inputs);
  assert.deepEqual(other.handshake('SCRAM-SHA-256', 1), { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: ['PLAIN', 'SCRAM-SHA-512', 'OAUTHBEARER'] });
  assert.equal(other.failed, true);
  const early = new SaslServerSession(settings(), inputs);
  assert.equal(early.authenticate(plainClientToken('alice', 'pw'), 0).errorCode, ErrorCode.ILLEGAL_SASL_STATE);
  const wrong = new SaslServerSession(settings(), inputs);
  wrong.handshake('PLAIN', 1);
  const answer = wrong.authenticate(plainClientToken('alice', 'bad'), 0);
  assert.equal(answer.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
  assert.match(answer.errorMessage!, /Invalid username or password/);
  assert.equal(wrong.failed, true);
  assert.equal(wrong.principal, 'User:ANONYMOUS');
});

test('session (KIP-368): the session expires after connections.max.reauth.ms; re-authenticating as the same principal renews it, as another fails', () => {
  const s = new SaslServerSession(settings({ reauthMs: 1000 }), inputs);
  s.handshake('PLAIN', 1);
  assert.equal(s.authenticate(plainClientToken('alice', 'pw'), 0).sessionLifetimeMs, 1000n);
  assert.equal(s.allows(0, 999), true);
  assert.equal(s.allows(0, 1000), false);
  assert.equal(s.handshake('PLAIN', 1).errorCode, ErrorCode.NONE);
  assert.equal(s.authenticate(plainClientToken('alice', 'pw'), 1500).sessionLifetimeMs, 1000n);
  assert.equal(s.allows(0, 2000), true);
  s.handshake('PLAIN', 1);
  const changed = s.authenticate(plainClientToken('bob', 'pw2'), 2100);
  assert.equal(changed.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED);
  assert.match(changed.errorMessage!, /Cannot change principals during re-authentication/);
  assert.equal(s.failed, true);
  // An OAUTHBEARER session ends with its token even before connections.max.reauth.ms.
  const o = new SaslServerSession(settings({ reauthMs: 3_600_000 }), inputs);
  o.handshake('OAUTHBEARER', 1);
  assert.equal(o.authenticate(oauthBearerClientToken(unsecuredJws({ sub: 'carol', exp: 10 })), 0).sessionLifetimeMs, 10_000n);
});

test('session: handshake v0 takes the next frames as raw tokens', () => {
  const s = new SaslServerSession(settings(), inputs);
  s.handshake('PLAIN', 0);
  assert.equal(s.expectsRawToken, true);
  assert.deepEqual(s.rawToken(plainClientToken('alice', 'pw'), 0), Buffer.alloc(0));
  assert.equal(s.principal, 'User:alice');
  const bad = new SaslServerSession(settings(), inputs);
  bad.handshake('PLAIN', 0);
  assert.equal(bad.rawToken(plainClientToken('alice', 'no'), 0), null);
  assert.equal(bad.failed, true);
});

test('--add-scram values as kafka-storage takes them', () => {
  const u = parseAddScram('SCRAM-SHA-512=[name=admin,password=admin-secret]');
  assert.equal(u.name, 'admin');
  assert.equal(u.mechanism, 'SCRAM-SHA-512');
  assert.equal(u.iterations, 4096);
  assert.equal(parseAddScram('SCRAM-SHA-256=[name="bob",password="x",iterations=8192]').iterations, 8192);
  assert.throws(() => parseAddScram('SCRAM-SHA-1=[name=a,password=b]'));
  assert.throws(() => parseAddScram('SCRAM-SHA-256=[name=a,password=b,iterations=100]'));
  assert.throws(() => parseAddScram('SCRAM-SHA-256=[password=b]'));
});
