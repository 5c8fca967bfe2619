// One connection's SASL server state (Kafka's SaslServerAuthenticator without the socket):
// SaslHandshake picks a mechanism, then its tokens arrive in SaslAuthenticate requests (handshake
// v1) or as raw size-prefixed frames (handshake v0, old clients); success sets the connection's
// principal, failure marks the session failed (the network answers, then closes the connection
// after connection.failed.authentication.delay.ms). With connections.max.reauth.ms the session
// expires (KIP-368): a new SaslHandshake + SaslAuthenticate re-authenticates it on the same
// connection and must name the same principal with the same mechanism.
//
// Pure: the clock value, the server nonce and the credential lookup come in as inputs.
import { ErrorCode } from '../protocol/index.js';
import { plainAuthenticate } from './sasl-plain.js';
import { isScramMechanism, ScramServer, SCRAM_MECHANISM_IDS, type ScramKeys, type ScramMechanismName } from './sasl-scram.js';
import { OAuthBearerServer, type OAuthBearerOptions } from './sasl-oauthbearer.js';

export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const;

/** What a SASL listener offers (built from its config by src/network/listener-security.ts). */
export interface SaslListenerSettings {
  /** sasl.enabled.mechanisms of the listener, in its order. */
  readonly mechanisms: readonly string[];
  /** PLAIN's users (user_<name>="password" of the listener's PlainLoginModule). */
  readonly plainUsers: ReadonlyMap<string, string>;
  readonly oauthBearer: OAuthBearerOptions;
  /** connections.max.reauth.ms; 0: sessions never expire. */
  readonly reauthMs: number;
}

/** What a session reads from the world. */
export interface SaslInputs {
  /** The user's SCRAM credential for a mechanism (Kafka's ScramMechanism id) in the current metadata image. */
  scramCredential(user: string, mechanism: number): ScramKeys | undefined;
  /** Made-up keys for a user who has none (same shape, so the exchange fails like a wrong password). */
  scramDecoy(user: string, mechanism: ScramMechanismName): ScramKeys;
  /** A fresh server nonce (printable, no comma). */
  nonce(): string;
}

export interface SaslAuthenticateAnswer {
  errorCode: number;
  errorMessage: string | null;
  authBytes: Buffer;
  sessionLifetimeMs: bigint;
}

type Mechanism = { step(token: Buffer, nowMs: number): { kind: 'challenge'; message: Buffer } | { kind: 'done'; message: Buffer; user: string; lifetimeEndMs?: number } | { kind: 'failed'; message: string } };

type State = 'handshake' | 'authenticate' | 'raw' | 'authenticated' | 'failed';

export class SaslServerSession {
  private state: State = 'handshake';
  private mechanism: Mechanism | null = null;
  private mechanismName: string | null = null;
  /** The mechanism and principal of the first authentication; re-authentication may change neither. */
  private firstMechanismName: string | null = null;
  private authenticatedPrincipal: string | null = null;
  /** When the current session ends (KIP-368), or null when it does not. */
  private expiresAtMs: number | null = null;
  private reauthenticating = false;

  constructor(private readonly settings: SaslListenerSettings, private readonly inputs: SaslInputs) {}

  /** The principal requests run as: the authenticated one, else User:ANONYMOUS. */
  get principal(): string { return this.authenticatedPrincipal ?? 'User:ANONYMOUS'; }
  get failed(): boolean { return this.state === 'failed'; }
  /** Handshake v0 was accepted: the next frames are raw tokens, not requests. */
  get expectsRawToken(): boolean { return this.state === 'raw'; }
  get authenticated(): boolean { return this.authenticatedPrincipal !== null; }

  /**
   * Whether a request of `apiKey` may be served now: ApiVersions and the SASL exchange always; any
   * other only once authenticated and while the session has not expired.
   */
  allows(apiKey: number, nowMs: number): boolean {
    if (apiKey === 18 || apiKey === 17 || apiKey === 36) return true;
    return this.authenticatedPrincipal !== null && !this.reauthenticating && (this.expiresAtMs === null || nowMs < this.expiresAtMs);
  }

  handshake(mechanism: string, version: number): { errorCode: number; mechanisms: string[] } {
    const mechanisms = [...this.settings.mechanisms];
    if (this.state === 'authenticated' && version >= 1) this.reauthenticating = true;
    else if (this.state !== 'handshake') return this.fail({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms });
    if (!mechanisms.includes(mechanism)) return this.fail({ errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms });
    if (this.firstMechanismName !== null && mechanism !== this.firstMechanismName) {
      return this.fail({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms });
    }
    this.mechanismName = mechanism;
    this.mechanism = this.mechanismFor(mechanism);
    this.state = version === 0 ? 'raw' : 'authenticate';
    return { errorCode: ErrorCode.NONE, mechanisms };
  }

  /** One SaslAuthenticate request's token. */
  authenticate(token: Buffer, nowMs: number): SaslAuthenticateAnswer {
    if (this.state !== 'authenticate' || this.mechanism === null) {
      return this.fail(answer(ErrorCode.ILLEGAL_SASL_STATE, 'Unexpected SaslAuthenticate request: no SaslHandshake v1 before it'));
    }
    const step = this.mechanism.step(token, nowMs);
    if (step.kind === 'failed') return this.fail(answer(ErrorCode.SASL_AUTHENTICATION_FAILED, step.message));
    if (step.kind === 'challenge') return answer(ErrorCode.NONE, null, step.message);
    const refusal = this.complete(`User:${step.user}`, nowMs, step.lifetimeEndMs);
    if (refusal !== null) return this.fail(answer(ErrorCode.SASL_AUTHENTICATION_FAILED, refusal));
    const lifetime = this.expiresAtMs === null ? 0n : BigInt(Math.max(0, this.expiresAtMs - nowMs));
    return { ...answer(ErrorCode.NONE, null, step.message), sessionLifetimeMs: lifetime };
  }

  /** One raw token after a v0 handshake: the raw answer, or null when the connection must close. */
  rawToken(token: Buffer, nowMs: number): Buffer | null {
    if (this.state !== 'raw' || this.mechanism === null) return null;
    const step = this.mechanism.step(token, nowMs);
    if (step.kind === 'failed') {
      this.state = 'failed';
      return null;
    }
    if (step.kind === 'challenge') return step.message;
    if (this.complete(`User:${step.user}`, nowMs, step.lifetimeEndMs) !== null) {
      this.state = 'failed';
      return null;
    }
    return step.message;
  }

  /** A finished exchange: the principal (unchanged on re-authentication) and the session's end. */
  private complete(principal: string, nowMs: number, credentialEndMs: number | undefined): string | null {
    if (this.authenticatedPrincipal !== null && principal !== this.authenticatedPrincipal) {
      return `Cannot change principals during re-authentication from ${this.authenticatedPrincipal} to ${principal}`;
    }
    this.authenticatedPrincipal = principal;
    this.firstMechanismName ??= this.mechanismName;
    this.state = 'authenticated';
    this.reauthenticating = false;
    // Kafka: the session ends at connections.max.reauth.ms, or sooner when the credential (a token) does.
    const reauth = this.settings.reauthMs;
    this.expiresAtMs = reauth <= 0 ? null : Math.min(nowMs + reauth, credentialEndMs ?? Number.MAX_SAFE_INTEGER);
    return null;
  }

  private fail<T>(result: T): T {
    this.state = 'failed';
    return result;
  }

  private mechanismFor(name: string): Mechanism {
    if (name === 'PLAIN') {
      const users = this.settings.plainUsers;
      return {
        step: (token) => {
          const r = plainAuthenticate(token, users);
          return r.ok ? { kind: 'done', message: Buffer.alloc(0), user: r.user } : { kind: 'failed', message: r.message };
        },
      };
    }
    if (isScramMechanism(name)) {
      const id = SCRAM_MECHANISM_IDS[name];
      const server = new ScramServer(name, (u) => this.inputs.scramCredential(u, id), (u) => this.inputs.scramDecoy(u, name), () => this.inputs.nonce());
      return { step: (token) => server.step(token) };
    }
    if (name === 'OAUTHBEARER') {
      const server = new OAuthBearerServer(this.settings.oauthBearer);
      return {
        step: (token, nowMs) => {
          const r = server.step(token, nowMs);
          return r.kind === 'done' ? { kind: 'done', message: Buffer.alloc(0), user: r.user, lifetimeEndMs: r.lifetimeEndMs } : r;
        },
      };
    }
    // sasl.enabled.mechanisms is checked against SASL_MECHANISMS when the listener starts.
    return { step: () => ({ kind: 'failed', message: `Authentication failed: mechanism ${name} is not supported` }) };
  }
}

function answer(errorCode: number, errorMessage: string | null, authBytes: Buffer = Buffer.alloc(0)): SaslAuthenticateAnswer {
  return { errorCode, errorMessage, authBytes, sessionLifetimeMs: 0n };
}
