// A client's side of a SASL login as Kafka requests: SaslHandshake v1, then SaslAuthenticate v1
// tokens until the mechanism is done. Sans I/O: whoever owns the connection sends each request and
// hands back its response (BrokerConnection; the Raft transport's connections to other controllers).
import { randomBytes } from 'node:crypto';
import { ClientError } from './errors.js';
import { isScramMechanism, plainClientToken, ScramClient } from '../security/index.js';

/** SASL credentials of a client: PLAIN or SCRAM-SHA-256/512 with a user name and password. */
export interface ClientSasl {
  mechanism: string;
  username: string;
  password: string;
}

export interface SaslLoginRequest { apiKey: 17 | 36; version: 1; body: object }
export type SaslLoginStep = SaslLoginRequest | { done: true; sessionLifetimeMs: bigint };

export class SaslLogin {
  private scram: ScramClient | null = null;
  private stage: 'handshake' | 'first' | 'final' | 'done' = 'handshake';

  constructor(private readonly sasl: ClientSasl) {
    if (sasl.mechanism !== 'PLAIN' && !isScramMechanism(sasl.mechanism)) {
      throw new ClientError(`SASL mechanism ${sasl.mechanism} is not supported by this client (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)`, 'AUTHENTICATION');
    }
  }

  start(): SaslLoginRequest {
    return { apiKey: 17, version: 1, body: { mechanism: this.sasl.mechanism } };
  }

  /** The next request after `response` (to the last request), or done. Throws ClientError when refused. */
  next(response: Record<string, any>): SaslLoginStep {
    if (this.stage === 'handshake') {
      if (response['errorCode'] !== 0) {
        throw new ClientError(`SASL mechanism ${this.sasl.mechanism} refused (error ${response['errorCode']}); the broker offers ${(response['mechanisms'] as string[]).join(', ') || 'none'}`, 'AUTHENTICATION');
      }
      this.stage = 'first';
      const { mechanism, username, password } = this.sasl;
      if (mechanism === 'PLAIN') return this.authenticate(plainClientToken(username, password));
      this.scram = new ScramClient(mechanism as 'SCRAM-SHA-256' | 'SCRAM-SHA-512', username, password, randomBytes(24).toString('base64url'));
      return this.authenticate(this.scram.first());
    }
    if (response['errorCode'] !== 0) throw new ClientError(`SASL authentication failed: ${response['errorMessage'] ?? `error ${response['errorCode']}`}`, 'AUTHENTICATION');
    const authBytes = response['authBytes'] as Buffer;
    if (this.scram !== null && this.stage === 'first') {
      this.stage = 'final';
      return this.authenticate(this.scram.final(authBytes));
    }
    if (this.scram !== null) this.scram.verify(authBytes);
    this.stage = 'done';
    return { done: true, sessionLifetimeMs: (response['sessionLifetimeMs'] as bigint | undefined) ?? 0n };
  }

  private authenticate(token: Buffer): SaslLoginRequest {
    return { apiKey: 36, version: 1, body: { authBytes: token } };
  }
}
