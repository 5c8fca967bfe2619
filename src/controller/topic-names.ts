// Topic name rules, as Kafka's Topic.validate and collision check apply them.

export const TOPIC_NAME_LENGTH_MAX = 249;
const LEGAL = /^[a-zA-Z0-9._-]+$/;

/** Null when `name` is a legal topic name, otherwise why not. */
export function topicNameError(name: string): string | null {
  if (name.length === 0) return 'Topic name is illegal, it can\'t be empty';
  if (name === '.' || name === '..') return 'Topic name cannot be "." or ".."';
  if (name.length > TOPIC_NAME_LENGTH_MAX) return `Topic name is illegal, it can't be longer than ${TOPIC_NAME_LENGTH_MAX} characters, topic name: ${name}`;
  if (!LEGAL.test(name)) return `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`;
  return null;
}

/** Metrics names replace '.' with '_', so two topics differing only there would collide. */
export function collisionKey(name: string): string {
  return name.replaceAll('.', '_');
}

/** Topics Kafka marks internal in Metadata (`is_internal`): the group and transaction logs. */
export const isInternalTopic = (name: string): boolean => name === '__consumer_offsets' || name === '__transaction_state';

/** The metadata log's topic: it lives in every node's log directory and no client may create it. */
export const METADATA_TOPIC_NAME = '__cluster_metadata';
