// The Java client's default partitioner for keyed records: murmur2 of the key bytes, made
// positive, modulo the partition count. kafkajs' default partitioner computes the same, so a key
// lands on the same partition whichever of those clients wrote it.
import { murmur2 } from '../util/index.js';

export { murmur2 };

export function partitionForKey(key: Uint8Array, partitionCount: number): number {
  return (murmur2(key) & 0x7fffffff) % partitionCount;
}
