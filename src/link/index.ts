// The link room's door: cluster links and mirror topics that keep the source's offsets (issue 35,
// part 2): the per-partition link fetcher, the node's link manager and the group offset sync.
export { LinkPartitionFetcher, type MirrorLog, type LinkFetcherOptions, type LinkPartitionStatus } from './fetcher.js';
export { LinkManager, linkClientOptions, type LinkAssignments, type LinkManagerOptions } from './manager.js';
export { TopicSync, SYNCED_TOPIC_CONFIGS, mirrorConfigChanges, type TopicSyncIntervals } from './topic-sync.js';
