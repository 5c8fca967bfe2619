// Logline as a library: start an embedded broker or a local cluster, or talk to one.
export const version = '0.1.0';
export { startServer, startCluster, type ServerOptions, type ServerHandle, type ClusterOptions, type ClusterHandle, type ClusterNodeHandle } from './broker/index.js';
export { BrokerConnection } from './client/index.js';
