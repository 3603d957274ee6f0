/**
 * Cross-instance change notices: `publish(channel, payload)` inside a write's transaction records the notice in
 * `change_log` and sends `pg_notify` (delivered at commit, to every instance), and `listen(channel, fn)` calls
 * `fn` for notices from any instance. With a driver that delivers notifications (node-postgres) one held
 * connection runs `LISTEN`, so a notice arrives within milliseconds; with one that cannot (PGlite) the log is
 * polled every `pollIntervalMs`.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../util/logger';
import type { PgHandle, PgTx } from './handle';
import type { PostgresPool, PostgresPoolClient } from './pool';

/** A change notice. */
export interface PostgresChange {
  readonly channel: string;
  readonly payload: string;
  /** True when this storage object published it (the other instances see `false`). */
  readonly local: boolean;
}

/** Options of {@link createPgNotifier}. */
export interface PgNotifierOptions {
  readonly pool: PostgresPool;
  readonly handle: PgHandle;
  readonly logger: Logger;
  readonly pollIntervalMs: number;
}

/** The notifier of one storage. */
export interface PgNotifier {
  publish(tx: PgTx, channel: string, payload: string): Promise<void>;
  /**
   * The publishing of one notice as a CTE fragment and a trailing `SELECT pg_notify(…)`, to fold into a write's own
   * statement (one round trip). Placeholders start at `$<first>`; `payloadSql` is an SQL expression for the payload.
   */
  inline(first: number, channel: string, payloadSql: string): { cte: string; select: string; params: unknown[] };
  listen(channel: string, listener: (change: PostgresChange) => void): () => void;
  /** `'notify'` (LISTEN on a held connection), `'poll'`, or `'idle'` before the first listener. */
  readonly mode: 'notify' | 'poll' | 'idle';
  close(): Promise<void>;
}

const PRUNE_EVERY = 500;

/** Create the notifier (connections are taken only when the first listener subscribes). */
export function createPgNotifier(options: PgNotifierOptions): PgNotifier {
  const { pool, handle, logger, pollIntervalMs } = options;
  const channelName = `minara_${handle.schemaName}`.slice(0, 63);
  const listeners = new Map<string, Set<(change: PostgresChange) => void>>();
  let mode: PgNotifier['mode'] = 'idle';
  let client: PostgresPoolClient | undefined;
  let timer: NodeJS.Timeout | undefined;
  let starting: Promise<void> | undefined;
  let published = 0;
  let highest = 0;
  const seen = new Set<number>();
  const origin = randomBytes(8).toString('hex');

  const deliver = (change: PostgresChange) => {
    for (const fn of listeners.get(change.channel) ?? []) {
      try {
        fn(change);
      } catch (error) {
        logger.warn('postgres: a change listener threw', { channel: change.channel, error: error instanceof Error ? error.message : String(error) });
      }
    }
  };

  const poll = async () => {
    try {
      const rows = await handle.op('notify.poll').all(`SELECT id, channel, payload, origin FROM ${handle.t('change_log')} WHERE id > $1 ORDER BY id`, [Math.max(0, highest - 256)]);
      for (const r of rows) {
        const id = Number(r.id);
        if (seen.has(id)) continue;
        seen.add(id);
        highest = Math.max(highest, id);
        deliver({ channel: String(r.channel), payload: String(r.payload), local: r.origin === origin });
      }
      if (seen.size > 4096) for (const id of seen) if (id < highest - 256) seen.delete(id);
    } catch (error) {
      if (!handle.closed) logger.debug('postgres: change poll failed', { error: error instanceof Error ? error.message : String(error) });
    }
  };

  const prune = async () => {
    try {
      await handle.op('notify.prune').run(`DELETE FROM ${handle.t('change_log')} WHERE at < $1`, [new Date(Date.now() - 3_600_000).toISOString()]);
    } catch {
      // pruning is best effort
    }
  };

  const start = async (): Promise<void> => {
    const row = await handle.op('notify.start').get(`SELECT COALESCE(MAX(id), 0) AS id FROM ${handle.t('change_log')}`);
    highest = Number(row?.id ?? 0);
    const candidate = await pool.connect();
    if (typeof candidate.on === 'function') {
      candidate.on('notification', (message) => {
        if (message.channel !== channelName || message.payload === undefined) return;
        try {
          const m = JSON.parse(message.payload) as { channel: string; payload: string; origin: string };
          deliver({ channel: m.channel, payload: m.payload, local: m.origin === origin });
        } catch {
          // not ours
        }
      });
      candidate.on('error', (error) => {
        // The listening connection died: drop it and listen again shortly (notices in between are in change_log).
        logger.warn('postgres: the LISTEN connection failed; reconnecting', { error: error.message });
        candidate.release(true);
        client = undefined;
        mode = 'idle';
        starting = undefined;
        const retry = setTimeout(() => {
          if (listeners.size > 0 && !handle.closed) starting ??= start().catch(() => undefined);
        }, 1_000);
        retry.unref?.();
      });
      await candidate.query(`LISTEN "${channelName}"`);
      client = candidate;
      mode = 'notify';
      return;
    }
    candidate.release();
    mode = 'poll';
    timer = setInterval(() => void poll(), pollIntervalMs);
    timer.unref?.();
  };

  return {
    get mode() {
      return mode;
    },
    inline(first, channel, payloadSql) {
      if (++published % PRUNE_EVERY === 0) void prune();
      return {
        cte: `minara_log AS (INSERT INTO ${handle.t('change_log')} (channel, payload, origin, at) VALUES ($${first}, ${payloadSql}, $${first + 1}, $${first + 2}))`,
        select: `SELECT pg_notify($${first + 3}, json_build_object('channel', $${first}::text, 'payload', ${payloadSql}, 'origin', $${first + 1}::text)::text)`,
        params: [channel, origin, new Date().toISOString(), channelName],
      };
    },
    async publish(tx, channel, payload) {
      await tx.run(`INSERT INTO ${handle.t('change_log')} (channel, payload, origin, at) VALUES ($1, $2, $3, $4)`, [channel, payload, origin, new Date().toISOString()]);
      await tx.run(`SELECT pg_notify($1, $2)`, [channelName, JSON.stringify({ channel, payload, origin })]);
      if (++published % PRUNE_EVERY === 0) await tx.run(`DELETE FROM ${handle.t('change_log')} WHERE at < $1`, [new Date(Date.now() - 3_600_000).toISOString()]);
    },
    listen(channel, listener) {
      let set = listeners.get(channel);
      if (set === undefined) listeners.set(channel, (set = new Set()));
      set.add(listener);
      starting ??= start().catch((error: unknown) => {
        starting = undefined;
        logger.warn('postgres: could not start listening for changes from other instances', { error: error instanceof Error ? error.message : String(error) });
      });
      return () => {
        set.delete(listener);
      };
    },
    async close() {
      if (timer !== undefined) clearInterval(timer);
      await starting;
      if (client !== undefined) {
        client.release(true);
        client = undefined;
      }
    },
  };
}
