/**
 * What autonomous turns delivered, read back from the conversation store (so every process of a fleet sees
 * the same list): the user's sessions written by the background runner (`surface: background`: heartbeat, schedule,
 * price alerts) and by signed webhooks (`surface: webhook`), each with its latest answer; a silent `HEARTBEAT_OK` is not
 * a delivery.
 */
import { MinaraError } from '../errors/minara-error';
import type { Storage } from '../storage/types';

/** The silent reply of a heartbeat turn with nothing to report: never delivered. */
export const HEARTBEAT_OK = 'HEARTBEAT_OK';

/** One delivered answer as read back from storage. */
export interface DeliveryRecord {
  readonly sessionId: string;
  /** `heartbeat`, `cron` (a `## Schedule` entry), `webhook`, `alert` (a price alert that fired), or `breaker` (a circuit breaker tripped). */
  readonly source: 'heartbeat' | 'cron' | 'webhook' | 'alert' | 'breaker';
  readonly text: string;
  /** When the answer was stored. */
  readonly at: string;
}

/** Query of {@link listDeliveries}. */
export interface DeliveryQuery {
  readonly userId: string;
  /** Only answers stored after this ISO time. */
  readonly after?: string | undefined;
  /** @default 20 (at most 100) */
  readonly limit?: number | undefined;
}

/** The text of a stored assistant message (a string, or its text parts). */
function answerText(json: string): string {
  try {
    const m = JSON.parse(json) as { content?: unknown };
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) {
      return m.content.map((p) => (typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'text' ? String((p as { text?: unknown }).text ?? '') : '')).join('');
    }
  } catch {
    // not a message
  }
  return '';
}

/** The user's deliveries, newest first. */
export async function listDeliveries(storage: Pick<Storage, 'conversations'>, query: DeliveryQuery): Promise<DeliveryRecord[]> {
  if (typeof query?.userId !== 'string' || query.userId === '') throw new MinaraError('INVALID_ARGUMENT', 'deliveries: userId must be a non-empty string');
  const limit = query.limit ?? 20;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) throw new MinaraError('INVALID_ARGUMENT', `deliveries: limit must be an integer from 1 to 100, got ${String(query.limit)}`);
  if (query.after !== undefined && Number.isNaN(Date.parse(query.after))) throw new MinaraError('INVALID_ARGUMENT', `deliveries: after must be an ISO time, got ${JSON.stringify(query.after)}`);
  const after = query.after === undefined ? undefined : new Date(query.after).toISOString();
  const sessions = (await storage.conversations.listSessions({ userId: query.userId, limit: 500 })).filter((s) => {
    const surface = s.metadata?.['surface'];
    return (surface === 'background' || surface === 'webhook') && (after === undefined || s.updatedAt > after);
  });
  const out: DeliveryRecord[] = [];
  for (const s of sessions) {
    if (out.length >= limit) break;
    const messages = await storage.conversations.listMessages(s.id);
    const last = [...messages].reverse().find((m) => m.role === 'assistant' && answerText(m.json).trim() !== '');
    if (!last || (after !== undefined && last.createdAt <= after)) continue;
    const text = answerText(last.json).trim();
    if (text === HEARTBEAT_OK) continue;
    const source = s.metadata?.['kind'] === 'breaker' ? 'breaker' : s.metadata?.['surface'] === 'webhook' ? 'webhook' : s.metadata?.['delivery'] === 'alert' ? 'alert' : s.id.startsWith('heartbeat-') ? 'heartbeat' : 'cron';
    out.push({ sessionId: s.id, source, text, at: last.createdAt });
  }
  return out.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
}
