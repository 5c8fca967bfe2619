// The security room's door: TLS settings of listeners and of the broker's own connections,
// principals from client certificates, the dev certificate helper, SASL mechanisms and sessions,
// and the ACL authorizer.
export { listenerTls, clientTls, SslConfigError, type ListenerTls, type ClientAuth, type SslValue } from './ssl.js';
export { parsePrincipalMappingRules, mapPrincipalName, distinguishedNameRfc2253, tlsPeerPrincipal, PrincipalMappingError, type TlsPeerPrincipal } from './principal.js';
export { writeDevCerts, type DevCerts } from './dev-certs.js';
export { nativeTlsAvailable, NativeTlsContext, NativeTlsSession, type NativeTlsPeer } from './native-tls.js';
export {
  AclIndex, AclCaller, StandardAuthorizer, authorizerFromConfig, parseSuperUsers, AUTHORIZER_CLASS_NAMES, type AuthorizerSettings,
} from './authorizer.js';
export {
  ResourceType, PatternType, AclOperation, AclPermissionType, CLUSTER_RESOURCE_NAME, WILDCARD_RESOURCE, WILDCARD_PRINCIPAL, WILDCARD_HOST,
  invalidBinding, invalidFilter, filterMatches, type AclBindingFilter,
} from '../metadata/index.js';
export { parseJaasConfig, JaasError, type JaasEntry } from './jaas.js';
export { plainAuthenticate, plainClientToken, plainUsers, secretsEqual, PLAIN_LOGIN_MODULE } from './sasl-plain.js';
export {
  ScramServer, ScramClient, scramSaltedPassword, scramKeysFromSaltedPassword, scramMechanismName, isScramMechanism,
  saslNameDecode, saslNameEncode, scramInvalidCredentials, SCRAM_MECHANISM_IDS, type ScramKeys, type ScramMechanismName,
} from './sasl-scram.js';
export { OAuthBearerServer, oauthBearerOptions, validateUnsecuredJws, oauthBearerClientToken, unsecuredJws, OAUTHBEARER_LOGIN_MODULE, type OAuthBearerOptions } from './sasl-oauthbearer.js';
export { SaslServerSession, SASL_MECHANISMS, type SaslListenerSettings, type SaslInputs, type SaslAuthenticateAnswer } from './sasl.js';
export { parseAddScram, scramUpsertion, scramCredentialRecord, SCRAM_ITERATIONS_DEFAULT, type ScramUpsertion } from './scram-credentials.js';
