/**
 * The agent working by itself, reporting to Telegram:
 *
 *   TELEGRAM_BOT_TOKEN=123:abc… TELEGRAM_CHAT_ID=4242 npx tsx examples/telegram/index.ts
 *
 * Add work to the workspace's HEARTBEAT.md under `## Schedule` (e.g. `- every 6h: check BTC funding`); each answer
 * is posted to the chat. Ctrl-C stops.
 */
import { pathToFileURL } from 'node:url';
import { createApp } from '@minara/agent';
import { createTelegramDelivery } from './delivery';

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const token = env['TELEGRAM_BOT_TOKEN'];
  const chatId = env['TELEGRAM_CHAT_ID'];
  if (!token || !chatId) throw new Error('Set TELEGRAM_BOT_TOKEN and TELEGRAM_CHAT_ID.');
  const app = await createApp({ surface: 'telegram', background: { deliver: createTelegramDelivery({ token, chatId }) } });
  app.background.start();
  console.log(app.background.describe());
  await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  await app.close();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
