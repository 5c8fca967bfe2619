export { assert, unreachable, AssertionError } from './assert.js';
export { limits } from './limits.js';
export { createLogger, componentLogger, parseLogLevel, quietLogger, LOG_LEVELS, type Logger, type LoggerOptions, type LogLevel, type LogFormat } from './log.js';
export { SlabPool, SlabLease } from './slab-pool.js';
export { Histogram, type HistogramSnapshot } from './histogram.js';
export { systemClock, ManualClock, Prng, type Clock } from './clock.js';
export { BufferPool, type BufferPoolOptions, type BufferPoolStats } from './buffer-pool.js';
export { partitionKey, parsePartitionKey, partitionName } from './partition-key.js';
export { freePort, freePorts, reservePort } from './free-port.js';
