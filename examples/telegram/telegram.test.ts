/**
 * The Telegram delivery adapter against a loopback stand-in for the Bot API, wired into createApp's background
 * runner: a scheduled answer is posted to the chat; the token never appears in an error.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createApp, silentLogger } from '@minara/agent';
import { createScriptedModel } from '@minara/agent/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTelegramDelivery } from './delivery';

const TOKEN = '123456:AAAbbbCCCdddEEEfffGGGhhh';
let server: Server;
let apiBase: string;
const posted: Array<{ path: string; body: { chat_id: string; text: string } }> = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { chat_id: string; text: string };
      if (body.chat_id === '999') {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: false, description: 'Bad Request: chat not found' }));
        return;
      }
      posted.push({ path: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, result: { message_id: posted.length } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  apiBase = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => server.close());

describe('examples/telegram', () => {
  it('posts a scheduled answer to the chat through sendMessage', async () => {
    let t = Date.parse('2026-03-02T05:59:00.000Z');
    const app = await createApp({
      envFileDir: false, env: {}, logger: silentLogger, finance: false, now: () => new Date(t),
      config: { dataDir: mkdtempSync(path.join(tmpdir(), 'minara-tg-')) },
      model: createScriptedModel([{ text: 'BTC funding flipped negative.' }]),
      background: { heartbeatEveryMs: 0, deliver: createTelegramDelivery({ token: TOKEN, chatId: '4242', apiBase }) },
    });
    try {
      writeFileSync(path.join(app.workspace!.dir, 'HEARTBEAT.md'), '# Heartbeat\n\n## Schedule\n\n- every 6h: check BTC funding\n');
      await app.background.syncSchedule();
      t = Date.parse('2026-03-02T06:00:30.000Z');
      await app.background.tick();
      await app.background.idle();
      expect(posted).toEqual([{ path: `/bot${TOKEN}/sendMessage`, body: { chat_id: '4242', text: expect.stringMatching(/^Scheduled: schedule:[0-9a-f]{8}\n\nBTC funding flipped negative\.$/), disable_web_page_preview: true } }]);
    } finally {
      await app.close();
    }
  });

  it('a refused post fails with the API reason and never the token; bad settings are refused', async () => {
    const deliver = createTelegramDelivery({ token: TOKEN, chatId: '999', apiBase });
    const error = await deliver({ jobId: 'heartbeat', sessionId: 's', source: 'heartbeat', text: 'x', at: '2026-03-02T00:00:00.000Z', stopReason: 'finished' }).catch((e: Error) => e);
    expect(String(error)).toBe('Error: Telegram sendMessage failed: HTTP 400 (Bad Request: chat not found)');
    expect(String(error)).not.toContain(TOKEN);
    expect(() => createTelegramDelivery({ token: 'nope', chatId: '1' })).toThrow(/bot token/);
    expect(() => createTelegramDelivery({ token: TOKEN, chatId: 'someone' })).toThrow(/chatId/);
  });
});
