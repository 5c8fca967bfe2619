// The security room's door: TLS settings of listeners and of the broker's own connections,
// principals from client certificates, the dev certificate helper, and the ACL authorizer.
export { listenerTls, clientTls, SslConfigError, type ListenerTls, type ClientAuth, type SslValue } from './ssl.js';
export { parsePrincipalMappingRules, mapPrincipalName, distinguishedNameRfc2253, PrincipalMappingError } from './principal.js';
export { writeDevCerts, type DevCerts } from './dev-certs.js';
export {
  AclIndex, AclCaller, StandardAuthorizer, authorizerFromConfig, parseSuperUsers, AUTHORIZER_CLASS_NAMES, type AuthorizerSettings,
} from './authorizer.js';
export {
  ResourceType, PatternType, AclOperation, AclPermissionType, CLUSTER_RESOURCE_NAME, WILDCARD_RESOURCE, WILDCARD_PRINCIPAL, WILDCARD_HOST,
  invalidBinding, invalidFilter, filterMatches, type AclBindingFilter,
} from '../metadata/index.js';
