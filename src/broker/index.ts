// The broker room's door.
export { startServer, parseListener, parseHttpListener, consoleLogger, quietLogger, DEFAULT_NETWORK_LIMITS, type ServerOptions, type ServerHandle, type BrokerServices, type HttpListener, type HttpListenerFactory } from './server.js';
export { RequestMetrics, REQUEST_LATENCY_BUCKETS_MS, type ApiRequestStats } from './request-metrics.js';
export type { LogMetadata } from './metadata-log.js';
export { Router, type Interceptor, type RouteOutcome } from './router.js';
export type { RequestContext, HandlerSpec, HandlerResult } from './context.js';
export type { NetworkLimits, NetworkStats, ListenerSpec, Logger } from './network.js';
export { Broker, type BrokerDeps, type MetadataSource, type LogFactory } from './broker.js';
export type { MetadataView, TopicView, PartitionView, BrokerEndpoint } from './services.js';
export { NotControllerError, type ControllerChannel, type ConfigChange } from './controller-channel.js';
export { ControllerService } from './controller-service.js';
export { startCluster, type ClusterOptions, type ClusterHandle, type ClusterNodeHandle } from './cluster.js';
export { clientSaslFor } from '../network/listener-security.js';
