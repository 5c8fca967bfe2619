// The client room's door: connections to brokers (used between brokers, by the CLI and the tests).
export { BrokerConnection, ClientError, type ConnectionOptions } from './connection.js';
