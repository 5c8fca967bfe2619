// The security room's door: TLS settings, principals, SASL mechanisms and sessions.
export { listenerTls, clientTls, SslConfigError, type ListenerTls, type ClientAuth, type SslValue } from './ssl.js';
export { parsePrincipalMappingRules, mapPrincipalName, distinguishedNameRfc2253, PrincipalMappingError } from './principal.js';
export { writeDevCerts, type DevCerts } from './dev-certs.js';
export { parseJaasConfig, JaasError, type JaasEntry } from './jaas.js';
export { plainAuthenticate, plainClientToken, plainUsers, secretsEqual, PLAIN_LOGIN_MODULE } from './sasl-plain.js';
export {
  ScramServer, ScramClient, scramSaltedPassword, scramKeysFromSaltedPassword, scramMechanismName, isScramMechanism,
  saslNameDecode, saslNameEncode, scramInvalidCredentials, SCRAM_MECHANISM_IDS, type ScramKeys, type ScramMechanismName,
} from './sasl-scram.js';
export { OAuthBearerServer, oauthBearerOptions, validateUnsecuredJws, oauthBearerClientToken, unsecuredJws, OAUTHBEARER_LOGIN_MODULE, type OAuthBearerOptions } from './sasl-oauthbearer.js';
export { SaslServerSession, SASL_MECHANISMS, type SaslListenerSettings, type SaslInputs, type SaslAuthenticateAnswer } from './sasl.js';
export { parseAddScram, scramUpsertion, scramCredentialRecord, SCRAM_ITERATIONS_DEFAULT, type ScramUpsertion } from './scram-credentials.js';
