// meta.properties, Kafka's stamp on a log directory (version=1 for KRaft): the node it belongs to,
// the cluster it belongs to and the directory's own id. `logline storage format` writes it before a
// cluster's first start; a single node writes its own at first start. Also Kafka's random UUID
// (cluster.id, directory.id), in the base64url form Kafka prints.
import * as nodePath from 'node:path';
import { randomBytes } from 'node:crypto';
import { StorageError } from './errors.js';
import { readProperties, writeProperties } from './checkpoint.js';
import type { FileSystem } from './fs.js';

export const META_PROPERTIES = 'meta.properties';

export interface MetaProperties { nodeId: number; clusterId: string; directoryId: string }

/** Ids Kafka never hands out: the zero UUID and the metadata topic's. */
const RESERVED_UUIDS = new Set(['AAAAAAAAAAAAAAAAAAAAAA', 'AAAAAAAAAAAAAAAAAAAAAQ']);

/**
 * A random Kafka UUID as Kafka's Uuid.randomUuid makes it: 16 random bytes in base64url (22
 * characters), never a reserved id and never starting with '-' (it would read as an option on a
 * command line, which is why Kafka skips those too).
 */
export function randomUuid(): string {
  for (;;) {
    const s = randomBytes(16).toString('base64url');
    if (!s.startsWith('-') && !RESERVED_UUIDS.has(s)) return s;
  }
}

/** A Kafka UUID in text: 22 base64url characters that decode to 16 bytes. */
export function isUuid(text: string): boolean {
  return /^[A-Za-z0-9_-]{22}$/.test(text) && Buffer.from(text, 'base64url').length === 16;
}

/** The directory's meta.properties, or null when it has none (not formatted). */
export function readMetaProperties(fs: FileSystem, dir: string): MetaProperties | null {
  const path = nodePath.join(dir, META_PROPERTIES);
  if (!fs.exists(path)) return null;
  const props = readProperties(fs, path);
  const version = props.get('version');
  if (version !== '1') throw new StorageError('KAFKA_STORAGE_ERROR', `${path}: version ${version ?? '(none)'}, expected 1 (a KRaft directory)`);
  const nodeId = Number(props.get('node.id'));
  const clusterId = props.get('cluster.id') ?? '';
  if (!Number.isSafeInteger(nodeId) || nodeId < 0) throw new StorageError('KAFKA_STORAGE_ERROR', `${path}: node.id ${props.get('node.id') ?? '(none)'} is not a node id`);
  if (clusterId === '') throw new StorageError('KAFKA_STORAGE_ERROR', `${path}: no cluster.id`);
  return { nodeId, clusterId, directoryId: props.get('directory.id') ?? '' };
}

/** Writes meta.properties (atomically, fsynced), Kafka's keys in Kafka's order. */
export function writeMetaProperties(fs: FileSystem, dir: string, meta: MetaProperties): void {
  fs.mkdirs(dir);
  const props = new Map([['version', '1'], ['node.id', String(meta.nodeId)], ['cluster.id', meta.clusterId], ['directory.id', meta.directoryId]]);
  writeProperties(fs, nodePath.join(dir, META_PROPERTIES), props, 'Written by Logline');
}
