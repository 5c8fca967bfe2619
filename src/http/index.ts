// The http room's door: a node's HTTP listener (health, the read-only /v1 admin API, Prometheus
// /metrics) and the views behind it.
export { startHttpListener } from './server.js';
export type { NodeHandle, HttpListener } from './node-handle.js';
export { nodeMetrics, toOpenMetrics, wantsOpenMetrics, OPENMETRICS_CONTENT_TYPE } from './metrics.js';
export { health, readiness, nodeView, brokers, quorum, topics, topic, linksView, type LinksView, type LinkRow, type MirrorTopicRow, type LinkPartitionRow, type Readiness, type NodeView, type BrokersView, type BrokerRow, type QuorumView, type TopicRow, type PartitionRow } from './admin.js';
export { groupLag, lagRows, groupsCoordinatedHere, type GroupLag, type PartitionLag } from './group-lag.js';
