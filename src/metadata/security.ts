// ACLs, SCRAM credentials and delegation tokens: three keyed images with copy-on-write deltas.
import type {
  AccessControlEntryRecord, DelegationTokenRecord, RemoveAccessControlEntryRecord, RemoveDelegationTokenRecord,
  RemoveUserScramCredentialRecord, UserScramCredentialRecord,
} from '../protocol/index.js';
import { createHash, createHmac } from 'node:crypto';
import { MetadataError } from './errors.js';

/** Applies `changes` (null = delete) over `base`; returns `base` itself when nothing changed. */
function applyChanges<K, V>(base: ReadonlyMap<K, V>, changes: ReadonlyMap<K, V | null>): ReadonlyMap<K, V> {
  if (changes.size === 0) return base;
  const next = new Map(base);
  for (const [k, v] of changes) {
    if (v === null) next.delete(k);
    else next.set(k, v);
  }
  return next;
}

export interface StandardAcl {
  readonly id: string;
  readonly resourceType: number;
  readonly resourceName: string;
  readonly patternType: number;
  readonly principal: string;
  readonly host: string;
  readonly operation: number;
  readonly permissionType: number;
}

export class AclsImage {
  static readonly EMPTY = new AclsImage(new Map());

  constructor(readonly acls: ReadonlyMap<string, StandardAcl>) {
    Object.freeze(this);
  }

  get isEmpty(): boolean { return this.acls.size === 0; }
}

export class AclsDelta {
  /** ACLs added (value) or removed (null) in this delta, by id. */
  readonly changes = new Map<string, StandardAcl | null>();

  constructor(readonly image: AclsImage) {}

  replay(r: AccessControlEntryRecord): void {
    this.changes.set(r.id, Object.freeze({
      id: r.id, resourceType: r.resourceType, resourceName: r.resourceName, patternType: r.patternType,
      principal: r.principal, host: r.host, operation: r.operation, permissionType: r.permissionType,
    }));
  }

  replayRemove(r: RemoveAccessControlEntryRecord): void {
    const current = this.changes.has(r.id) ? this.changes.get(r.id) : this.image.acls.get(r.id);
    if (current === undefined || current === null) {
      throw new MetadataError('UNKNOWN_ACL', `RemoveAccessControlEntryRecord for unknown ACL ${r.id}`);
    }
    this.changes.set(r.id, null);
  }

  apply(): AclsImage {
    return this.changes.size === 0 ? this.image : new AclsImage(applyChanges(this.image.acls, this.changes));
  }
}

/** Kafka's ScramMechanism ids. */
export const ScramMechanism = { SCRAM_SHA_256: 1, SCRAM_SHA_512: 2 } as const;

export interface ScramCredential {
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
  readonly iterations: number;
}

/**
 * RFC 5802's StoredKey = H(HMAC(SaltedPassword, "Client Key")) and ServerKey =
 * HMAC(SaltedPassword, "Server Key"): what a credential record keeps of a salted password
 * (AlterUserScramCredentials carries the salted password; the controller derives these).
 */
export function scramCredentialFromSaltedPassword(mechanism: number, saltedPassword: Buffer, salt: Buffer, iterations: number): ScramCredential {
  const hash = mechanism === ScramMechanism.SCRAM_SHA_256 ? 'sha256' : 'sha512';
  const clientKey = createHmac(hash, saltedPassword).update('Client Key').digest();
  return {
    salt, iterations,
    storedKey: createHash(hash).update(clientKey).digest(),
    serverKey: createHmac(hash, saltedPassword).update('Server Key').digest(),
  };
}

export class ScramImage {
  static readonly EMPTY = new ScramImage(new Map());

  /** user → mechanism → credential */
  constructor(readonly users: ReadonlyMap<string, ReadonlyMap<number, ScramCredential>>) {
    Object.freeze(this);
  }

  get isEmpty(): boolean { return this.users.size === 0; }

  credential(user: string, mechanism: number): ScramCredential | undefined {
    return this.users.get(user)?.get(mechanism);
  }
}

export class ScramDelta {
  /** Working copies of the users this delta touched. */
  private readonly touched = new Map<string, Map<number, ScramCredential>>();

  constructor(readonly image: ScramImage) {}

  changedUsers(): string[] { return [...this.touched.keys()]; }

  private working(user: string): Map<number, ScramCredential> {
    let w = this.touched.get(user);
    if (w === undefined) {
      w = new Map(this.image.users.get(user) ?? []);
      this.touched.set(user, w);
    }
    return w;
  }

  replay(r: UserScramCredentialRecord): void {
    // Copy the byte fields: decoded bytes are slices of a batch the caller may reuse.
    this.working(r.name).set(r.mechanism, Object.freeze({
      salt: Buffer.from(r.salt), storedKey: Buffer.from(r.storedKey), serverKey: Buffer.from(r.serverKey),
      iterations: r.iterations,
    }));
  }

  replayRemove(r: RemoveUserScramCredentialRecord): void {
    this.working(r.name).delete(r.mechanism);
  }

  apply(): ScramImage {
    if (this.touched.size === 0) return this.image;
    const users = new Map(this.image.users);
    for (const [user, creds] of this.touched) {
      if (creds.size === 0) users.delete(user);
      else users.set(user, creds);
    }
    return new ScramImage(users);
  }
}

export interface DelegationToken {
  readonly tokenId: string;
  readonly owner: string;
  readonly requester: string;
  readonly renewers: readonly string[];
  readonly issueTimestampMs: bigint;
  readonly maxTimestampMs: bigint;
  readonly expirationTimestampMs: bigint;
}

export class DelegationTokensImage {
  static readonly EMPTY = new DelegationTokensImage(new Map());

  constructor(readonly tokens: ReadonlyMap<string, DelegationToken>) {
    Object.freeze(this);
  }

  get isEmpty(): boolean { return this.tokens.size === 0; }
}

export class DelegationTokensDelta {
  readonly changes = new Map<string, DelegationToken | null>();

  constructor(readonly image: DelegationTokensImage) {}

  replay(r: DelegationTokenRecord): void {
    this.changes.set(r.tokenId, Object.freeze({
      tokenId: r.tokenId, owner: r.owner, requester: r.requester, renewers: Object.freeze([...r.renewers]),
      issueTimestampMs: r.issueTimestamp, maxTimestampMs: r.maxTimestamp, expirationTimestampMs: r.expirationTimestamp,
    }));
  }

  replayRemove(r: RemoveDelegationTokenRecord): void {
    this.changes.set(r.tokenId, null);
  }

  apply(): DelegationTokensImage {
    return this.changes.size === 0 ? this.image : new DelegationTokensImage(applyChanges(this.image.tokens, this.changes));
  }
}
