/**
 * Plan tests on a real PostgreSQL server: a pool that records the statements the storage sends (through
 * `pool.query` and through checked-out clients, as transactions use), and EXPLAIN of one of them with its own
 * parameters, flattened to its nodes.
 */
import type pg from 'pg';
import type { PostgresPool } from '@minara/agent/postgres';

/** One node of an `EXPLAIN (FORMAT JSON)` plan, with the fields these tests read. */
export interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly 'Relation Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

/** A statement as the storage sent it. */
export interface SentStatement {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** Every node of a plan tree. */
export const planNodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(planNodes)];

/** `pool` as a storage pool that appends every statement it is sent to `sent`. */
export function recordingPool(pool: pg.Pool, sent: SentStatement[]): PostgresPool {
  // One proxy per pooled client: the storage keeps state per client it is handed, and the pool itself later
  // calls that client's own `query` with a callback, so the client object is never modified.
  const proxies = new WeakMap<pg.PoolClient, pg.PoolClient>();
  return {
    query: (text, values) => {
      sent.push({ text, values: values ?? [] });
      return pool.query(text, values as unknown[] | undefined);
    },
    connect: async () => {
      const client = await pool.connect();
      const known = proxies.get(client);
      if (known !== undefined) return known;
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      const proxy = new Proxy(client, {
        get: (target, key, receiver) =>
          key !== 'query'
            ? (Reflect.get(target, key, receiver) as unknown)
            : (...args: unknown[]) => {
                if (typeof args[0] === 'string') sent.push({ text: args[0], values: (args[1] as unknown[] | undefined) ?? [] });
                return query(...args);
              },
      });
      proxies.set(client, proxy);
      return proxy;
    },
  };
}

/** EXPLAIN a sent statement with its own parameters: the plan's nodes, and the statement with its plan for messages. */
export async function explainSent(pool: pg.Pool, statement: SentStatement): Promise<{ readonly used: PlanNode[]; readonly context: string }> {
  const explained = await pool.query(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.values as unknown[]);
  const plan = (explained.rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode }> })['QUERY PLAN'][0]!.Plan;
  return { used: planNodes(plan), context: `${statement.text}\n${JSON.stringify(plan, null, 1)}` };
}
