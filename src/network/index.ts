// The network room's door: the socket server (listeners, connections, framing, ordered responses,
// backpressure), connection limits and quotas, per-API request metrics, and each listener's TLS
// and SASL settings. It hands framed requests to a RequestChannel (the broker's router) and knows
// nothing of what they ask.
export {
  NetworkServer, type NetworkRequestContext, type RequestChannel, type RouteOutcome, type ThrottleHook,
  type ListenerSpec, type ListenerSasl, type NetworkLimits, type NetworkStats,
} from './socket-server.js';
export { ConnectionQuotas, connectionAddress, type ConnectionLimits } from './connection-quotas.js';
export { RequestMetrics, REQUEST_LATENCY_BUCKETS_MS, type ApiRequestStats } from './request-metrics.js';
export {
  securedListener, saslInputs, saslSettingsOf, listenerTlsOf, clientTlsFor, clientSaslFor, brokerLoginOf, protocolOf, usesTls, usesSasl,
} from './listener-security.js';
