// Logline as a library: start an embedded broker or a local cluster, or talk to one.
import {
  startServer as startBrokerServer, startCluster as startBrokerCluster,
  type ServerOptions, type ServerHandle, type ClusterOptions, type ClusterHandle,
} from './node/index.js';
import { startHttpListener } from './http/index.js';

export const version = '0.1.0';
export type { ServerOptions, ServerHandle, ClusterOptions, ClusterHandle, ClusterNodeHandle } from './node/index.js';
export { BrokerConnection } from './client/index.js';

/**
 * A node as `logline server` runs it, with its HTTP listener on http.listener (default
 * 127.0.0.1:9644; empty: none), and the schema registry when the config names
 * schema.registry.listener (or `schemaRegistry: true` asks for it on the default 127.0.0.1:8081).
 */
export function startServer(options: ServerOptions = {}): Promise<ServerHandle> {
  const schemaRegistry = options.schemaRegistry ?? options.config?.originals.has('schema.registry.listener') ?? false;
  return startBrokerServer({ http: startHttpListener, ...options, schemaRegistry });
}

/** A local cluster whose nodes each have an HTTP listener on a free port of their own (`nodes[i].httpPort`). */
export function startCluster(options: ClusterOptions = {}): Promise<ClusterHandle> {
  return startBrokerCluster({ http: startHttpListener, ...options });
}
