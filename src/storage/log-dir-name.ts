// A partition's log directory is `<topic>-<partition>` (Kafka's layout); the log manager also keys
// its logs and checkpointed offsets by that name. Both directions are spelled here only.

export function logDirName(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

/** `<topic>-<partition>` (a log directory's name, or a key of `LogManager.logs`) split up. */
export function parseLogDirName(name: string): { topic: string; partition: number } | null {
  const m = /^(.+)-(\d+)$/.exec(name);
  return m ? { topic: m[1]!, partition: Number(m[2]) } : null;
}
