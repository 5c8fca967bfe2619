// SASL OAUTHBEARER (RFC 7628) with Kafka's default, development-only validation: an unsecured JWS
// (RFC 7515 with "alg":"none" and no signature), as OAuthBearerUnsecuredValidatorCallbackHandler
// accepts. The principal is the token's `sub` claim, or the claim named by the JAAS option
// unsecuredValidatorPrincipalClaimName; `exp` must lie in the future (allowing
// unsecuredValidatorAllowableClockSkewMs); unsecuredValidatorRequiredScope lists scopes the token's
// `scope` claim must hold. A refused token gets RFC 7628's error challenge; the client's dummy
// answer (a single 0x01) then ends the exchange with the failure, as Kafka does.

export const OAUTHBEARER_LOGIN_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule';

export interface OAuthBearerOptions {
  readonly principalClaimName: string;
  readonly allowableClockSkewMs: number;
  readonly requiredScope: readonly string[];
}

/** Kafka's option names (unsecuredValidator*) → options; absent ones take Kafka's defaults. */
export function oauthBearerOptions(jaasOptions: ReadonlyMap<string, string> | undefined): OAuthBearerOptions {
  const skew = Number(jaasOptions?.get('unsecuredValidatorAllowableClockSkewMs') ?? '0');
  return {
    principalClaimName: jaasOptions?.get('unsecuredValidatorPrincipalClaimName')?.trim() || 'sub',
    allowableClockSkewMs: Number.isFinite(skew) && skew >= 0 ? skew : 0,
    requiredScope: (jaasOptions?.get('unsecuredValidatorRequiredScope') ?? '').split(/[\s,]+/).filter((s) => s.length > 0),
  };
}

export type OAuthStep =
  | { kind: 'done'; user: string; lifetimeEndMs: number }
  | { kind: 'challenge'; message: Buffer; reason: string }
  | { kind: 'failed'; message: string };

const KVSEP = '\u0001';

function base64UrlJson(part: string): Record<string, unknown> | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

/** Validates an unsecured JWS; returns the principal and expiry, or why it is refused. */
export function validateUnsecuredJws(token: string, o: OAuthBearerOptions, nowMs: number): { user: string; expMs: number } | { error: string; scope?: string } {
  const parts = token.split('.');
  if (parts.length !== 3) return { error: 'the token is not a compact JWS (three dot-separated parts)' };
  const header = base64UrlJson(parts[0]!);
  const claims = base64UrlJson(parts[1]!);
  if (header === undefined || claims === undefined) return { error: 'the token\'s header or payload is not base64url-encoded JSON' };
  if (header['alg'] !== 'none') return { error: 'the token\'s header must say "alg":"none" (unsecured tokens only)' };
  if (parts[2] !== '') return { error: 'an unsecured token must have an empty signature' };
  const user = claims[o.principalClaimName];
  if (typeof user !== 'string' || user.trim().length === 0) return { error: `the token has no string claim ${JSON.stringify(o.principalClaimName)}` };
  const exp = claims['exp'];
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return { error: 'the token has no numeric "exp" claim' };
  const expMs = Math.floor(exp * 1000);
  if (nowMs > expMs + o.allowableClockSkewMs) return { error: `the token expired at ${new Date(expMs).toISOString()}` };
  const iat = claims['iat'];
  if (iat !== undefined && (typeof iat !== 'number' || iat * 1000 > nowMs + o.allowableClockSkewMs)) return { error: 'the token\'s "iat" claim is invalid or in the future' };
  const scopeClaim = claims['scope'];
  const scopes = typeof scopeClaim === 'string' ? scopeClaim.split(' ') : Array.isArray(scopeClaim) ? scopeClaim.map(String) : [];
  const missing = o.requiredScope.filter((s) => !scopes.includes(s));
  if (missing.length > 0) return { error: `the token lacks the required scope ${missing.join(' ')}`, scope: o.requiredScope.join(' ') };
  return { user, expMs };
}

/** The server side of one OAUTHBEARER exchange. */
export class OAuthBearerServer {
  private state: 'first' | 'error-sent' | 'done' = 'first';
  private reason = '';

  constructor(private readonly options: OAuthBearerOptions) {}

  step(token: Buffer, nowMs: number): OAuthStep {
    if (this.state === 'error-sent') {
      this.state = 'done';
      return { kind: 'failed', message: `Authentication failed: ${this.reason}` };
    }
    if (this.state === 'done') return { kind: 'failed', message: 'Authentication failed: unexpected OAUTHBEARER message' };
    const text = token.toString('utf8');
    const m = /^n,(?:a=([^,]*))?,\u0001(.*)\u0001$/s.exec(text);
    if (m === null) return this.refuse('invalid OAUTHBEARER client first message');
    const pairs = new Map<string, string>();
    for (const kv of m[2]!.split(KVSEP)) {
      if (kv.length === 0) continue;
      const eq = kv.indexOf('=');
      if (eq <= 0) return this.refuse('invalid OAUTHBEARER key/value pair');
      pairs.set(kv.slice(0, eq), kv.slice(eq + 1));
    }
    const auth = /^Bearer ([\x20-\x7e]+)$/i.exec(pairs.get('auth') ?? '');
    if (auth === null) return this.refuse('no "auth=Bearer <token>" in the client first message');
    const result = validateUnsecuredJws(auth[1]!.trim(), this.options, nowMs);
    if ('error' in result) return this.refuse(result.error, result.scope);
    const authzid = m[1];
    if (authzid !== undefined && authzid.length > 0 && authzid !== result.user) {
      return this.refuse(`authorization id ${authzid} is not the token's principal`);
    }
    this.state = 'done';
    return { kind: 'done', user: result.user, lifetimeEndMs: result.expMs };
  }

  private refuse(reason: string, scope?: string): OAuthStep {
    this.state = 'error-sent';
    this.reason = reason;
    const body = scope === undefined ? { status: 'invalid_token' } : { status: 'invalid_token', scope };
    return { kind: 'challenge', message: Buffer.from(JSON.stringify(body), 'utf8'), reason };
  }
}

/** A client first message carrying `token` (tests and our own client). */
export function oauthBearerClientToken(token: string): Buffer {
  return Buffer.from(`n,,${KVSEP}auth=Bearer ${token}${KVSEP}${KVSEP}`, 'utf8');
}

/** An unsecured JWS for `sub`, valid for `lifetimeMs` from `nowMs`. */
export function unsecuredJws(claims: Record<string, unknown>): string {
  const enc = (o: object): string => Buffer.from(JSON.stringify(o), 'utf8').toString('base64url');
  return `${enc({ alg: 'none' })}.${enc(claims)}.`;
}
