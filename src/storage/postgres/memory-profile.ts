/**
 * The user profile and the consolidation events of the Postgres memory domain. Profile entries are keyed by
 * the scope's text agent key (`''` for a user-level scope); the person's value wins over the agent's in one
 * statement. Record shapes are the shared ones (`../memory-logic.ts`).
 */
import { MinaraError } from '../../errors/minara-error';
import { consolidationEventFromRow, profileEntryFromRow } from '../memory-logic';
import type { ConsolidationEvent, MemoryScope, MemoryStorage, ProfileEntry } from '../memory-types';
import { agentKey, type PgMemoryState, SCOPE, sp } from './memory-rows';

type Args<K extends keyof MemoryStorage> = Parameters<NonNullable<MemoryStorage[K]>>;

/** Record a consolidation decision. */
export async function appendConsolidationEvent(st: PgMemoryState, ...[scope, event]: Args<'appendConsolidationEvent'>): Promise<ConsolidationEvent> {
  const r = await st.h.op('memory.appendConsolidationEvent').get(
    `INSERT INTO ${st.h.t('memory_consolidation_events')} (user_id, agent_id, pass, decision, fact_id, other_id, reason, model, model_verdict, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
    [...sp(scope), event.pass, event.decision, event.factId, event.otherId ?? null, event.reason, event.model ?? null, event.modelVerdict ?? null, event.now],
  );
  const { now, ...rest } = event;
  return { ...rest, id: Number(r!.id), createdAt: now };
}

/** The scope's consolidation events, newest first (those naming a fact, when asked). */
export async function listConsolidationEvents(st: PgMemoryState, ...[scope, options]: Args<'listConsolidationEvents'>): Promise<ConsolidationEvent[]> {
  const rows = await st.h.op('memory.listConsolidationEvents').all(
    `SELECT * FROM ${st.h.t('memory_consolidation_events')} WHERE ${SCOPE} AND ($3::bigint IS NULL OR fact_id = $3 OR other_id = $3) ORDER BY id DESC LIMIT $4`,
    [...sp(scope), options.factId ?? null, options.limit],
  );
  return rows.map(consolidationEventFromRow);
}

const PROFILE_COLUMNS = 'key, value, updated_at, set_by';

/** The scope's profile in first-set order. */
export async function profileList(st: PgMemoryState, scope: MemoryScope): Promise<ProfileEntry[]> {
  const rows = await st.h.op('memory.profileList').all(`SELECT ${PROFILE_COLUMNS} FROM ${st.h.t('user_profile')} WHERE user_id = $1 AND agent_key = $2 ORDER BY id ASC`, [
    scope.userId, agentKey(scope),
  ]);
  return rows.map(profileEntryFromRow);
}

/** One profile entry, under the operation name given. */
export async function profileGet(st: PgMemoryState, scope: MemoryScope, key: string, operation = 'memory.profileGet'): Promise<ProfileEntry | undefined> {
  const r = await st.h.op(operation).get(`SELECT ${PROFILE_COLUMNS} FROM ${st.h.t('user_profile')} WHERE user_id = $1 AND agent_key = $2 AND key = $3`, [
    scope.userId, agentKey(scope), key,
  ]);
  return r === undefined ? undefined : profileEntryFromRow(r);
}

/** Set an entry; the person's value wins: an agent write does not replace an entry the person set (one statement, no race). */
export async function profileSet(st: PgMemoryState, ...[scope, key, value, now, setBy = 'user']: Args<'profileSet'>): Promise<ProfileEntry> {
  const r = await st.h.op('memory.profileSet').get(
    `INSERT INTO ${st.h.t('user_profile')} AS p (user_id, agent_key, key, value, created_at, updated_at, set_by) VALUES ($1, $2, $3, $4, $5, $5, $6)
     ON CONFLICT (user_id, agent_key, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, set_by = excluded.set_by
     WHERE NOT (p.set_by = 'user' AND excluded.set_by = 'agent')
     RETURNING ${PROFILE_COLUMNS}`,
    [scope.userId, agentKey(scope), key, value, now, setBy],
  );
  if (r !== undefined) return profileEntryFromRow(r);
  const kept = await profileGet(st, scope, key, 'memory.profileSet');
  if (kept === undefined) throw new MinaraError('STORAGE_ERROR', `memory.profileSet: profile entry ${JSON.stringify(key)} vanished during the write`);
  return kept;
}

/** Remove an entry; whether there was one. */
export async function profileDelete(st: PgMemoryState, scope: MemoryScope, key: string): Promise<boolean> {
  return (await st.h.op('memory.profileDelete').run(`DELETE FROM ${st.h.t('user_profile')} WHERE user_id = $1 AND agent_key = $2 AND key = $3`, [scope.userId, agentKey(scope), key])) > 0;
}
