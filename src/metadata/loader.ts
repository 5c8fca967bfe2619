// MetadataLoader turns committed batches of metadata records into images and hands each new
// (delta, image) to its publishers. It is pure: the Raft driver (or a test) calls handleCommit
// and handleSnapshot; nothing here reads clocks or does I/O. A publisher that throws stops the
// load: the image it would have seen is not installed, so a later retry replays the same batch.
import { MetadataDelta, MetadataImage, provenance, type MetadataProvenance } from './image.js';
import { imageToRecords } from './snapshot.js';
import type { MetadataRecord } from './records.js';
import { MetadataError } from './errors.js';

export interface MetadataBatch {
  /** Offset of the first record; records have consecutive offsets. */
  readonly baseOffset: number;
  /** The Raft leader epoch the batch was written in. */
  readonly epoch: number;
  readonly appendTimestampMs?: number;
  readonly records: readonly MetadataRecord[];
}

export type LoaderManifest =
  | { readonly kind: 'log'; readonly provenance: MetadataProvenance; readonly numBatches: number; readonly numRecords: number }
  | { readonly kind: 'snapshot'; readonly provenance: MetadataProvenance; readonly numRecords: number };

export interface MetadataPublisher {
  readonly name: string;
  onMetadataUpdate(delta: MetadataDelta, image: MetadataImage, manifest: LoaderManifest): void;
}

/** Builds an image from scratch out of a snapshot's records. */
export function loadSnapshot(records: Iterable<MetadataRecord>, at: MetadataProvenance = provenance(-1, -1)): MetadataImage {
  return snapshotDelta(records).apply(at);
}

function snapshotDelta(records: Iterable<MetadataRecord>): MetadataDelta {
  const delta = new MetadataDelta(MetadataImage.EMPTY);
  for (const r of records) delta.replay(r);
  return delta;
}

export class MetadataLoader {
  private current: MetadataImage = MetadataImage.EMPTY;
  private readonly publishers: MetadataPublisher[] = [];

  get image(): MetadataImage { return this.current; }

  /**
   * Adds a publisher. When the loader already holds state, the publisher first gets the whole
   * image as a delta from the empty image (Kafka does the same), so it never misses history.
   */
  installPublisher(publisher: MetadataPublisher): void {
    if (this.publishers.some((p) => p.name === publisher.name)) {
      throw new MetadataError('INVALID_RECORD', `publisher ${publisher.name} is already installed`);
    }
    this.publishers.push(publisher);
    if (this.current === MetadataImage.EMPTY) return;
    const records = imageToRecords(this.current);
    const delta = snapshotDelta(records);
    publisher.onMetadataUpdate(delta, this.current, { kind: 'snapshot', provenance: this.current.provenance, numRecords: records.length });
  }

  removePublisher(name: string): void {
    const i = this.publishers.findIndex((p) => p.name === name);
    if (i >= 0) this.publishers.splice(i, 1);
  }

  /** Replays committed batches; publishes once after the last of them. Returns the new image. */
  handleCommit(batches: readonly MetadataBatch[]): MetadataImage {
    if (batches.length === 0) return this.current;
    const delta = new MetadataDelta(this.current);
    let numRecords = 0;
    let expectedOffset = this.current.provenance.lastContainedOffset + 1;
    for (const batch of batches) {
      if (batch.records.length === 0) continue;
      if (batch.baseOffset < expectedOffset) {
        throw new MetadataError('INVALID_RECORD', `batch at offset ${batch.baseOffset} is below the next offset ${expectedOffset}`);
      }
      for (const r of batch.records) delta.replay(r);
      numRecords += batch.records.length;
      expectedOffset = batch.baseOffset + batch.records.length;
    }
    const last = batches[batches.length - 1]!;
    const at = provenance(expectedOffset - 1, last.epoch, last.appendTimestampMs ?? -1);
    return this.publish(delta, delta.apply(at), { kind: 'log', provenance: at, numBatches: batches.length, numRecords });
  }

  /**
   * Committed control records up to `lastOffset` (leader changes, voter changes): no state changes
   * and nothing is published, but the image's position moves past them, as Kafka's MetadataLoader
   * counts them. A broker reports this position in its heartbeats, and the controller compares it
   * with positions that may be a control record's (a snapshot's end, the offset a fencing needs).
   */
  handleControl(lastOffset: number, epoch: number): MetadataImage {
    if (lastOffset <= this.current.provenance.lastContainedOffset) return this.current;
    this.current = new MetadataDelta(this.current).apply(provenance(lastOffset, epoch, this.current.provenance.lastContainedLogTimeMs));
    return this.current;
  }

  /** Replaces the image with a snapshot's content (the delta is relative to the old image). */
  handleSnapshot(records: readonly MetadataRecord[], at: MetadataProvenance): MetadataImage {
    const image = loadSnapshot(records, at);
    // Publishers get a delta against the image they last saw, so they can diff (e.g. deletes).
    const delta = new MetadataDelta(this.current);
    for (const r of diffRecords(this.current, image)) delta.replay(r);
    return this.publish(delta, image, { kind: 'snapshot', provenance: at, numRecords: records.length });
  }

  private publish(delta: MetadataDelta, image: MetadataImage, manifest: LoaderManifest): MetadataImage {
    for (const p of this.publishers) p.onMetadataUpdate(delta, image, manifest);
    this.current = image;
    return image;
  }
}

/**
 * Records that take `from` to `to` for the parts a broker acts on: removed topics are removed and
 * everything in `to` is re-stated. Simple and correct for the topics delta (untouched partitions
 * re-stated with equal epochs give no local changes); other sub-images are fully re-stated.
 */
function diffRecords(from: MetadataImage, to: MetadataImage): MetadataRecord[] {
  const out: MetadataRecord[] = [];
  for (const id of from.topics.topicsById.keys()) {
    if (!to.topics.topicsById.has(id)) out.push({ type: 9, version: 0, data: { topicId: id } });
  }
  for (const r of imageToRecords(to)) {
    // Existing topics cannot be re-created; their partitions are re-stated below.
    if (r.type === 2 && from.topics.topicsById.has(r.data.topicId)) continue;
    out.push(r);
  }
  return out;
}
