// Logline as a library: start an embedded broker, or talk to one.
export const version = '0.1.0';
export { startServer, type ServerOptions, type ServerHandle } from './broker/index.js';
export { BrokerConnection } from './client/index.js';
