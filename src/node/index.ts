// The node room's door: one node's assembly. `startServer` runs a node (broker, controller or
// both, as process.roles says) with its metadata log, and `startCluster` several on free ports.
// Only src/cli and the package door (src/index.ts) import it.
export {
  startServer, parseListener, parseHttpListener, consoleLogger, quietLogger, DEFAULT_NETWORK_LIMITS,
  type ServerOptions, type ServerHandle, type BrokerServices, type HttpListenerFactory,
} from './server.js';
export { startCluster, type ClusterOptions, type ClusterHandle, type ClusterNodeHandle } from './cluster.js';
export { Broker, type BrokerDeps, type MetadataSource, type LogFactory } from './broker.js';
export type { LogMetadata } from './metadata-log.js';
export { ControllerService } from './controller-service.js';
export { FormatError, formatStorage, storageInfo, type InitialQuorum } from './storage-format.js';
