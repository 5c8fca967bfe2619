// Principals of TLS clients: the certificate's distinguished name in RFC 2253 form, mapped to a
// user name with Kafka's ssl.principal.mapping.rules (RULE:pattern/replacement/[LU] and DEFAULT,
// tried in order; the first whose pattern matches the whole name wins).
import type { X509Certificate } from 'node:crypto';

export class PrincipalMappingError extends Error {
  override name = 'PrincipalMappingError';
}

interface Rule {
  readonly pattern: RegExp | null; // null: DEFAULT
  readonly replacement: string;
  readonly caseChange: '' | 'L' | 'U';
}

/** Parses ssl.principal.mapping.rules; a rule's pattern and replacement may contain `\/` and commas. */
export function parsePrincipalMappingRules(text: string): readonly Rule[] {
  const rules: Rule[] = [];
  let rest = text.trim();
  while (rest !== '') {
    if (rest.startsWith('DEFAULT')) {
      rules.push({ pattern: null, replacement: '', caseChange: '' });
      rest = rest.slice('DEFAULT'.length);
    } else if (rest.startsWith('RULE:')) {
      const m = /^RULE:((?:\\.|[^\\/])*)\/((?:\\.|[^\\/])*)\/([LU]?)/.exec(rest);
      if (m === null) throw new PrincipalMappingError(`ssl.principal.mapping.rules: malformed rule at ${JSON.stringify(rest)}`);
      const pattern = m[1]!.replace(/\\\//g, '/');
      try {
        rules.push({ pattern: new RegExp(`^(?:${pattern})$`), replacement: m[2]!.replace(/\\\//g, '/'), caseChange: m[3] as '' | 'L' | 'U' });
      } catch (e) {
        throw new PrincipalMappingError(`ssl.principal.mapping.rules: bad pattern ${JSON.stringify(pattern)}: ${(e as Error).message}`);
      }
      rest = rest.slice(m[0].length);
    } else {
      throw new PrincipalMappingError(`ssl.principal.mapping.rules: expected RULE: or DEFAULT at ${JSON.stringify(rest)}`);
    }
    rest = rest.replace(/^\s*,?\s*/, '');
  }
  return rules;
}

/** The user name for a distinguished name; throws when no rule matches (the client is refused, as Kafka's NoMatchingRule). */
export function mapPrincipalName(rules: readonly Rule[], distinguishedName: string): string {
  for (const r of rules) {
    if (r.pattern === null) return distinguishedName;
    if (!r.pattern.test(distinguishedName)) continue;
    const name = distinguishedName.replace(r.pattern, r.replacement);
    return r.caseChange === 'L' ? name.toLowerCase() : r.caseChange === 'U' ? name.toUpperCase() : name;
  }
  throw new PrincipalMappingError(`no ssl.principal.mapping.rules rule matches ${distinguishedName}`);
}

/**
 * RFC 2253 form of a certificate's subject: most specific RDN first, comma separated. Node gives
 * the subject one RDN per line in certificate order, values already escaped as RFC 2253 asks
 * (its multiline format uses OpenSSL's ESC_2253 flag), so only the order and separator change.
 */
export function distinguishedNameRfc2253(cert: X509Certificate): string {
  return cert.subject.split('\n').filter((x) => x !== '').reverse().map((rdn) => rdn.replace(/ \+ /g, '+')).join(',');
}

/** What a TLS peer authenticates as: `User:<mapped name>` (with the DN it came from), or why it is refused. */
export type TlsPeerPrincipal = { principal: string; dn: string | null } | { refused: string; why: 'no certificate' | 'untrusted' | 'unmapped' };

/**
 * The principal of a TLS connection once its handshake is done, as Kafka's SslPrincipalMapper
 * gives it: no client certificate is User:ANONYMOUS (refused when ssl.client.auth=required); an
 * untrusted one (possible with `requested`) or one no rule maps is refused. Every TLS listener,
 * client or controller, decides here.
 */
export function tlsPeerPrincipal(
  peer: { getPeerX509Certificate(): X509Certificate | undefined; readonly authorized: boolean; readonly authorizationError?: Error | string | null },
  clientAuth: 'none' | 'requested' | 'required', rules: readonly Rule[],
): TlsPeerPrincipal {
  const cert = peer.getPeerX509Certificate();
  if (cert === undefined) return clientAuth === 'required' ? { refused: 'no client certificate (ssl.client.auth=required)', why: 'no certificate' } : { principal: 'User:ANONYMOUS', dn: null };
  if (!peer.authorized) return { refused: `offered an untrusted certificate: ${String(peer.authorizationError)}`, why: 'untrusted' };
  const dn = distinguishedNameRfc2253(cert);
  try {
    return { principal: `User:${mapPrincipalName(rules, dn)}`, dn };
  } catch (e) {
    return { refused: (e as Error).message, why: 'unmapped' };
  }
}
