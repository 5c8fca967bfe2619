// The broker room's door: request handling. The router (one handler per API key, authorization
// before the handler runs), the handlers, the request context, and what handlers are given to work
// with: fetch sessions, client quotas, the config admin, producer ids, the controller channel (the
// port to the active controller) and the inter-broker senders of the transaction coordinator.
export * from './handlers/index.js';
export { Router, type Interceptor, type Observer } from './router.js';
export type { RequestContext, Authz, HandlerSpec, HandlerResult, RequestOf, ResponseOf } from './context.js';
export { AUTHORIZATION_RULES, CONTROLLER_LISTENER_RULES, authorizeRequest, bindAuthz, aclHost } from './authorization.js';
export type {
  MetadataView, TopicView, PartitionView, BrokerEndpoint, LogDirDescription, ProducePartitionsParams, TopicAdmin, TxnMarkerParams, ControllerServices, ShareStateStore, ShareAdminServices,
} from './services.js';
export { NotControllerError, type ControllerChannel, type ConfigChange, type ResourceResult } from './controller-channel.js';
export { ConfigAdmin, planConfigChange } from './config-admin.js';
export { FORWARDED_APIS, innerRequestData, innerResponseData, encodeHostAddress, encodePrincipal, type ForwardedFor } from './envelope.js';
export { ClientQuotaManager, ControllerMutationQuota, QuotaKey, enforceClientQuotas, quotaWindowOf, STRICT_MUTATION_QUOTA_SINCE } from './quotas.js';
export { FetchSessionCache } from './fetch-sessions.js';
export { ShareSessionCache, SHARE_SESSION_INITIAL_EPOCH, SHARE_SESSION_FINAL_EPOCH, type ShareSession } from './share-sessions.js';
export { ProducerIdManager } from './producer-ids.js';
export { TxnMarkerSender } from './txn-marker-sender.js';
export { AddPartitionsToTxnManager } from './txn-verification.js';
export { ShareStateSender } from './share-state-sender.js';
