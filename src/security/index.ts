// The security room's door: TLS settings of listeners and of the broker's own connections,
// principals from client certificates, and the dev certificate helper. SASL and ACLs come later.
export { listenerTls, clientTls, SslConfigError, type ListenerTls, type ClientAuth, type SslValue } from './ssl.js';
export { parsePrincipalMappingRules, mapPrincipalName, distinguishedNameRfc2253, PrincipalMappingError } from './principal.js';
export { writeDevCerts, type DevCerts } from './dev-certs.js';
