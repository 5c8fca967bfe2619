// The process's one logger: every line has a time, a level and the component that wrote it, as
// text (`2026-12-05T03:20:00.123Z INFO [storage] message`) or as JSON lines
// ({"ts":...,"level":...,"component":...,"msg":...}) for log shippers. Levels are Kafka's (log4j's):
// ERROR, WARN, INFO, DEBUG, TRACE; a line below the configured level costs one comparison.

export const LOG_LEVELS = ['ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE'] as const;
export type LogLevel = typeof LOG_LEVELS[number];
export type LogFormat = 'text' | 'json';

/**
 * What the rest of the code logs through. Plain objects with the three methods satisfy it (tests
 * pass them); `child` is how a component gets its own name on every line it writes.
 */
export interface Logger {
  error(msg: string): void;
  warn(msg: string): void;
  info(msg: string): void;
  debug?(msg: string): void;
  trace?(msg: string): void;
  child?(component: string): Logger;
}

/** `logger` with `component` on its lines (a plain object without `child` is returned as it is). */
export function componentLogger(logger: Logger, component: string): Logger {
  return logger.child?.(component) ?? logger;
}

export interface LoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  component?: string;
  /** Where ERROR and WARN lines go, and the others (default: stderr and stdout). */
  writeError?: (line: string) => void;
  writeOther?: (line: string) => void;
  /** The time a line carries (default: the wall clock). */
  nowMs?: () => number;
}

export function parseLogLevel(text: string): LogLevel {
  const level = text.trim().toUpperCase();
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new Error(`log.level: expected one of ${LOG_LEVELS.join(', ')}, got "${text}"`);
  return level as LogLevel;
}

class LineLogger implements Logger {
  private readonly rank: number;

  constructor(private readonly o: Required<LoggerOptions>) {
    this.rank = LOG_LEVELS.indexOf(o.level);
  }

  error(msg: string): void { this.write(0, msg); }
  warn(msg: string): void { this.write(1, msg); }
  info(msg: string): void { this.write(2, msg); }
  debug(msg: string): void { this.write(3, msg); }
  trace(msg: string): void { this.write(4, msg); }

  child(component: string): Logger {
    return new LineLogger({ ...this.o, component: this.o.component === '' ? component : `${this.o.component}.${component}` });
  }

  private write(rank: number, msg: string): void {
    if (rank > this.rank) return;
    const ts = new Date(this.o.nowMs()).toISOString();
    const level = LOG_LEVELS[rank]!;
    const component = this.o.component === '' ? 'logline' : this.o.component;
    const line = this.o.format === 'json'
      ? JSON.stringify({ ts, level, component, msg })
      : `${ts} ${level.padEnd(5)} [${component}] ${msg}`;
    (rank <= 1 ? this.o.writeError : this.o.writeOther)(line);
  }
}

export function createLogger(o: LoggerOptions = {}): Logger {
  return new LineLogger({
    level: o.level ?? 'INFO', format: o.format ?? 'text', component: o.component ?? '',
    writeError: o.writeError ?? ((line) => process.stderr.write(line + '\n')),
    writeOther: o.writeOther ?? ((line) => process.stdout.write(line + '\n')),
    nowMs: o.nowMs ?? Date.now,
  });
}

/** Says nothing (the library's default: an embedded broker should not print). */
export const quietLogger: Logger = { error() {}, warn() {}, info() {} };
