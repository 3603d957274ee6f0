/** Structured fields attached to a log line. */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * The logger every factory accepts as `logger`. Lines are structured: a short message plus fields,
 * so hosts can forward them to pino, winston or OpenTelemetry unchanged.
 */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** Log levels in increasing severity. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/**
 * A logger that writes one JSON line per entry to stderr at or above `level`.
 *
 * @example
 * ```ts
 * const logger = createConsoleLogger({ level: 'info' });
 * logger.warn('sqlite-vec unavailable', { reason: 'load failed' });
 * ```
 */
export function createConsoleLogger(options: { level?: LogLevel; write?: (line: string) => void } = {}): Logger {
  const { level = 'warn', write = (line: string) => process.stderr.write(`${line}\n`) } = options;
  const min = ORDER[level];
  const emit = (lvl: Exclude<LogLevel, 'silent'>) => (message: string, fields?: LogFields) => {
    if (ORDER[lvl] < min) return;
    write(JSON.stringify({ level: lvl, time: new Date().toISOString(), msg: message, ...fields }));
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

/** A logger that drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
