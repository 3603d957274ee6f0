/**
 * Deliver the agent's autonomous answers (heartbeat, your HEARTBEAT.md schedule) to a Telegram chat through the
 * Bot API's `sendMessage`. A host adapter for `createApp({ background: { deliver } })`; Slack, Discord or email
 * adapters look the same.
 */
import type { Delivery } from '@minara/agent';

export interface TelegramDeliveryOptions {
  /** The bot token from @BotFather (`TELEGRAM_BOT_TOKEN`). It travels only in the request path to `apiBase`. */
  readonly token: string;
  /** The chat to post to (`TELEGRAM_CHAT_ID`). */
  readonly chatId: string;
  /** @default 'https://api.telegram.org' */
  readonly apiBase?: string;
  readonly fetch?: typeof fetch;
}

/** Telegram caps a message at 4096 characters. */
const MAX_CHARS = 4096;

export function createTelegramDelivery(options: TelegramDeliveryOptions): (delivery: Delivery) => Promise<void> {
  const { token, chatId, apiBase = 'https://api.telegram.org' } = options;
  const doFetch = options.fetch ?? fetch;
  if (!/^\d+:[A-Za-z0-9_-]{20,}$/.test(token)) throw new Error('createTelegramDelivery: "token" is not a Telegram bot token (digits:letters).');
  if (!/^-?\d+$|^@[A-Za-z0-9_]{5,}$/.test(chatId)) throw new Error('createTelegramDelivery: "chatId" must be a numeric chat id or @channel.');
  const url = `${apiBase.replace(/\/$/, '')}/bot${token}/sendMessage`;
  return async (delivery) => {
    const header = delivery.source === 'heartbeat' ? 'Heartbeat' : delivery.source === 'alert' ? 'Price alert' : `Scheduled: ${delivery.jobId}`;
    const text = `${header}\n\n${delivery.text}`.slice(0, MAX_CHARS);
    const response = await doFetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chat_id: chatId, text, disable_web_page_preview: true }) });
    const body = (await response.json().catch(() => ({}))) as { ok?: boolean; description?: string };
    // The error names the API's reason, never the URL (it carries the token).
    if (!response.ok || body.ok !== true) throw new Error(`Telegram sendMessage failed: HTTP ${response.status}${body.description ? ` (${body.description})` : ''}`);
  };
}
