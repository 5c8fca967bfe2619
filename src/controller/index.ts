// The controller room's door. It only ever emits metadata records; applying them is the metadata
// room's job once they are committed.
export { topicNameError, collisionKey, isInternalTopic, METADATA_TOPIC_NAME, TOPIC_NAME_LENGTH_MAX } from './topic-names.js';
export { placeReplicas, rackAlternated, type PlacementBroker } from './placement.js';
export {
  createTopics, deleteTopics, createPartitions, randomUuid, RecordType, CONFIG_RESOURCE_TOPIC,
  type EmittedRecord, type ControllerView, type TopicSummary, type TopicDefaults, type TopicConfigValidator,
  type CreateTopicsOutcome, type DeleteTopicsOutcome, type CreatePartitionsOutcome,
} from './topics.js';
