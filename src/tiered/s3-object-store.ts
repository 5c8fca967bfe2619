// S3 and S3-compatible stores through @aws-sdk/client-s3: objects up to the multipart threshold go
// up in one PUT, larger ones as a multipart upload read from the file part by part (S3 makes the
// object visible only when the upload completes, so a reader never sees half of one); reads are
// ranged GETs.
import { open } from 'node:fs/promises';
import {
  S3Client, PutObjectCommand, GetObjectCommand, DeleteObjectCommand, ListObjectsV2Command,
  CreateMultipartUploadCommand, UploadPartCommand, CompleteMultipartUploadCommand, AbortMultipartUploadCommand,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { limits } from '../util/index.js';
import { RemoteResourceNotFoundError, RemoteStorageError } from './errors.js';
import { isSafeObjectKey, putEach, type ObjectPut, type ObjectSource, type ObjectStore } from './object-store.js';

/** S3's smallest part other than the last. */
export const S3_PART_BYTES_MIN = 5 * 1024 * 1024;

export interface S3ObjectStoreOptions {
  readonly bucket: string;
  readonly region: string;
  /** For S3-compatible stores (MinIO, Ceph, s3rver); unset: AWS. */
  readonly endpoint?: string;
  /** Bucket in the path rather than the host name, as most compatible stores need. */
  readonly pathStyle?: boolean;
  /** Unset: the SDK's default chain (environment, profile, instance role). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string };
  /** Objects at least this big are uploaded in parts. */
  readonly multipartThresholdBytes: number;
  readonly partBytes: number;
  /** Aiven's s3.api.call.timeout: a whole call with its retries (unset: none). */
  readonly apiCallTimeoutMs?: number;
  /** Aiven's s3.api.call.attempt.timeout: one attempt, the body sent and the answer read (unset: none). */
  readonly apiCallAttemptTimeoutMs?: number;
  /** An attempt with no byte moving either way this long fails (the AWS Java SDK's socket timeout; default 30 s). */
  readonly socketTimeoutMs?: number;
}

/** The AWS Java SDK's defaults, which Kafka's S3 plugins inherit: a store that stops answering fails the call instead of holding it forever. */
export const S3_SOCKET_TIMEOUT_MS_DEFAULT = 30_000;
const S3_CONNECTION_TIMEOUT_MS = 2_000;

export class S3ObjectStore implements ObjectStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly thresholdBytes: number;
  private readonly partBytes: number;
  private readonly apiCallTimeoutMs: number | undefined;
  /** The calls in flight, aborted on close (destroying the client does not end them). */
  private readonly inFlight = new Set<AbortController>();
  private closed = false;

  constructor(o: S3ObjectStoreOptions) {
    if (o.bucket === '') throw new RemoteStorageError('the S3 bucket name is empty', { retriable: false });
    if (!Number.isSafeInteger(o.partBytes) || o.partBytes < S3_PART_BYTES_MIN) {
      throw new RemoteStorageError(`S3 part size ${o.partBytes} is below S3's minimum of ${S3_PART_BYTES_MIN}`, { retriable: false });
    }
    this.bucket = o.bucket;
    this.thresholdBytes = o.multipartThresholdBytes;
    this.partBytes = o.partBytes;
    this.apiCallTimeoutMs = o.apiCallTimeoutMs;
    this.client = new S3Client({
      region: o.region,
      ...(o.endpoint !== undefined ? { endpoint: o.endpoint } : {}),
      forcePathStyle: o.pathStyle ?? false,
      ...(o.credentials !== undefined ? { credentials: { ...o.credentials } } : {}),
      // The copy task retries with its own backoff; the SDK's retries would only hide a dead store longer.
      maxAttempts: 2,
      // The SDK's own defaults wait forever on a store that accepted the connection and went silent.
      requestHandler: {
        connectionTimeout: S3_CONNECTION_TIMEOUT_MS, socketTimeout: o.socketTimeoutMs ?? S3_SOCKET_TIMEOUT_MS_DEFAULT,
        ...(o.apiCallAttemptTimeoutMs !== undefined ? { requestTimeout: o.apiCallAttemptTimeoutMs, throwOnRequestTimeout: true } : {}),
      },
    });
  }

  /**
   * One call (with the reading of its answer), ended on close and after the api call timeout when
   * there is one. A signal of its own per call: no listener piles up on a long-lived one.
   */
  private async send<T>(run: (options: { abortSignal: AbortSignal }) => Promise<T>): Promise<T> {
    if (this.closed) throw new RemoteStorageError('the S3 store is closed', { retriable: false });
    const c = new AbortController();
    this.inFlight.add(c);
    const limit = this.apiCallTimeoutMs;
    const timer = limit === undefined ? undefined : setTimeout(() => c.abort(new RemoteStorageError(`no answer within storage.s3.api.call.timeout (${limit} ms)`)), limit);
    try {
      return await run({ abortSignal: c.signal });
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(c);
    }
  }

  private checkKey(key: string): void {
    if (!isSafeObjectKey(key)) throw new RemoteStorageError(`unsafe object key ${JSON.stringify(key)}`, { retriable: false });
  }

  putAll(first: readonly ObjectPut[], last: ObjectPut): Promise<void> {
    return putEach(this, first, last);
  }

  async put(key: string, source: ObjectSource): Promise<void> {
    this.checkKey(key);
    try {
      if ('bytes' in source) {
        await this.send((o) => this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: source.bytes }), o));
        return;
      }
      const file = await open(source.path, 'r');
      try {
        const size = (await file.stat()).size;
        if (size < this.thresholdBytes) {
          const body = await readAt(file, 0, size);
          await this.send((o) => this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body }), o));
        } else {
          await this.putMultipart(key, file, size);
        }
      } finally {
        await file.close();
      }
    } catch (e) {
      throw s3Error(`cannot upload ${key}`, e);
    }
  }

  private async putMultipart(key: string, file: import('node:fs/promises').FileHandle, size: number): Promise<void> {
    // Grow the part size when the file would need more parts than S3 allows.
    const partBytes = Math.max(this.partBytes, Math.ceil(size / limits.s3MultipartPartsMax));
    const created = await this.send((o) => this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key }), o));
    const uploadId = created.UploadId;
    if (uploadId === undefined) throw new RemoteStorageError(`${key}: the store returned no upload id`);
    try {
      const parts: { ETag: string; PartNumber: number }[] = [];
      // One part in memory at a time: a 1 GiB segment never sits in the heap whole.
      for (let start = 0, n = 1; start < size; start += partBytes, n++) {
        const body = await readAt(file, start, Math.min(partBytes, size - start));
        const r = await this.send((o) => this.client.send(new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumber: n, Body: body }), o));
        if (r.ETag === undefined) throw new RemoteStorageError(`${key}: part ${n} got no ETag`);
        parts.push({ ETag: r.ETag, PartNumber: n });
      }
      await this.send((o) => this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }), o));
    } catch (e) {
      // Leave no billed, invisible parts behind; if the abort fails too, a bucket lifecycle rule must.
      await this.send((o) => this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }), o)).catch(() => undefined);
      throw e;
    }
  }

  async getRange(key: string, start: number, endExclusive: number): Promise<Buffer> {
    this.checkKey(key);
    if (endExclusive <= start) return Buffer.alloc(0);
    try {
      return await this.send(async (o) => {
        const r = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${start}-${endExclusive - 1}` }), o);
        return Buffer.from(await r.Body!.transformToByteArray());
      });
    } catch (e) {
      throw s3Error(`cannot read ${key}`, e);
    }
  }

  async get(key: string, bytesMax: number): Promise<Buffer> {
    this.checkKey(key);
    try {
      return await this.send(async (o) => {
        const r = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }), o);
        if ((r.ContentLength ?? 0) > bytesMax) {
          await r.Body?.transformToWebStream().cancel();
          throw new RemoteStorageError(`${key} has ${r.ContentLength} bytes, more than ${bytesMax}`, { retriable: false });
        }
        return Buffer.from(await r.Body!.transformToByteArray());
      });
    } catch (e) {
      throw s3Error(`cannot read ${key}`, e);
    }
  }

  async delete(key: string): Promise<void> {
    this.checkKey(key);
    try {
      await this.send((o) => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }), o));
    } catch (e) {
      const err = s3Error(`cannot delete ${key}`, e);
      if (!(err instanceof RemoteResourceNotFoundError)) throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    try {
      let token: string | undefined;
      do {
        const r = await this.send((o) => this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }), o));
        for (const o of r.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key);
        token = r.IsTruncated === true ? r.NextContinuationToken : undefined;
      } while (token !== undefined);
    } catch (e) {
      throw s3Error(`cannot list ${prefix}`, e);
    }
    return keys;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.inFlight) c.abort(new RemoteStorageError('the S3 store is closed', { retriable: false }));
    this.client.destroy();
  }
}

async function readAt(file: import('node:fs/promises').FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await file.read(buf, filled, length - filled, position + filled);
    if (bytesRead === 0) throw new RemoteStorageError(`file shrank while uploading (${filled} of ${length} bytes at ${position})`);
    filled += bytesRead;
  }
  return buf;
}

const NOT_FOUND = new Set(['NoSuchKey', 'NotFound', 'NoSuchUpload']);
/** Credentials and permissions do not fix themselves; everything else (5xx, timeouts, throttling) may. */
const PERMANENT = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'NoSuchBucket', 'InvalidBucketName', 'InvalidRange']);

function s3Error(message: string, e: unknown): RemoteStorageError {
  if (e instanceof RemoteStorageError) return e;
  if (e instanceof S3ServiceException) {
    if (NOT_FOUND.has(e.name) || e.$metadata.httpStatusCode === 404) return new RemoteResourceNotFoundError(`${message}: not found`, { cause: e });
    return new RemoteStorageError(`${message}: ${e.name}: ${e.message}`, { retriable: !PERMANENT.has(e.name), cause: e });
  }
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  // A local segment file gone missing is the broker's problem, not the store's: retrying will not help.
  if (code === 'ENOENT') return new RemoteStorageError(`${message}: local file not found`, { retriable: false, cause: e });
  return new RemoteStorageError(`${message}: ${(e as Error).message}`, { cause: e });
}
