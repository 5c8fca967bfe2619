// A partition's identity as a string, spelled in one place: the key of maps and sets of partitions,
// and the name Kafka prints for one. A partition's directory on disk is named by the storage room
// (logDirName), whatever these say.

/** The key of a partition in maps and sets. No topic name contains NUL, so no two partitions share one. */
export function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/** The topic and partition a partitionKey was made from. */
export function parsePartitionKey(key: string): { topic: string; partition: number } {
  const at = key.lastIndexOf('\u0000');
  return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)) };
}

/** A partition as Kafka prints one in messages and logs (TopicPartition.toString): `topic-partition`. */
export function partitionName(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}
