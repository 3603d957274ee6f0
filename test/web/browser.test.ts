/**
 * The web app (examples/web, React on `useChat`) in a real headless Chromium against a real gateway with the
 * offline scripted model and the finance pack's paper trading. Screenshots of each page land in
 * `.tmp/screenshots/` for a reviewer. Without Chromium these tests skip loudly (CI installs it and fails
 * instead): `apt-get install -y chromium`.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { createApp, type MinaraApp, silentLogger } from '@minara/agent';
import { createGateway, serveGateway, type ServedGateway } from '@minara/agent/gateway';
import { createScriptedModel, type ScriptEntry } from '@minara/agent/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realComponent } from '../support/real-component';

const ROOT = path.join(import.meta.dirname, '..', '..');
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const hasChromium = realComponent('Chromium', CHROMIUM !== undefined, 'apt-get install -y chromium (Debian), then run the tests again');
const SHOTS = path.join(ROOT, '.tmp', 'screenshots');

type Browser = import('playwright-core').Browser;
type Page = import('playwright-core').Page;

const dirs: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
let webDir: string;
let browser: Browser | undefined;
const running: Array<{ app: MinaraApp; served: ServedGateway }> = [];
/** Uncaught errors in any page: none is expected. */
const pageErrors: string[] = [];

/** A gateway over createApp (paper trading, SQLite) with the scripted model, serving the built web app. */
async function start(script: ScriptEntry[], options: { chunkDelayMs?: number; noModel?: boolean; onApp?: (app: MinaraApp) => Promise<void> } = {}): Promise<string> {
  const dir = temp('minara-web-');
  const app = await createApp({
    envFileDir: false, env: {}, logger: silentLogger, surface: 'gateway', config: { dataDir: dir }, artifacts: { png: false },
    ...(options.noModel ? {} : { model: createScriptedModel(script, { chunkDelayMs: options.chunkDelayMs ?? 0 }) }),
  });
  const gateway = createGateway({
    runtime: app.runtime, storage: app.storage, tools: app.tools, memoryFor: app.memoryFor, logger: silentLogger,
    ...(app.workspace ? { workspace: app.workspace } : {}),
    ...(app.artifacts ? { artifacts: app.artifacts, files: app.files } : {}),
    web: { dir: webDir }, modelStatus: app.modelStatus, background: app.background,
  });
  await options.onApp?.(app);
  const served = await serveGateway({ gateway, port: 0 });
  running.push({ app, served });
  return `${served.url}/`;
}

async function open(url: string): Promise<Page> {
  const page = await browser!.newPage({ viewport: { width: 1100, height: 800 } });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(url);
  return page;
}
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
const send = async (page: Page, text: string) => {
  await page.getByLabel('message').fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
};

describe.skipIf(!hasChromium)('web app in headless Chromium', () => {
  beforeAll(async () => {
    const { build } = await import('vite');
    webDir = temp('minara-web-build-');
    // The production build `npm run build` ships (vitest's NODE_ENV=test would otherwise select React's development build).
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      await build({ configFile: path.join(ROOT, 'examples/web/vite.config.ts'), mode: 'production', build: { outDir: webDir, emptyOutDir: true }, logLevel: 'silent' });
    } finally {
      process.env.NODE_ENV = nodeEnv;
    }
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    mkdirSync(SHOTS, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    expect(pageErrors, pageErrors.join('\n')).toEqual([]);
    await browser?.close();
    for (const { app, served } of running) {
      await served.close();
      await app.close();
    }
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('ships within its size budget: ≤ 300 KB of gzipped JavaScript', () => {
    const assets = path.join(webDir, 'assets');
    const gz = readdirSync(assets).filter((f) => f.endsWith('.js')).reduce((n, f) => n + gzipSync(readFileSync(path.join(assets, f))).length, 0);
    expect(gz).toBeGreaterThan(10_000);
    expect(gz).toBeLessThanOrEqual(300 * 1024);
  });

  it('chat: a message streams an answer with a tool card', async () => {
    const url = await start([{ toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] }, { text: 'BTC is trading on the simulated market right now.' }]);
    const page = await open(url);
    await send(page, "What's BTC at?");
    await page.getByText('BTC is trading on the simulated market right now.').waitFor();
    await expect(page.getByTestId('tool-card').first().textContent()).resolves.toContain('get_price');
    await expect(page.getByTestId('tool-card').first().textContent()).resolves.toContain('output-available');
    await shot(page, 'chat');
    await page.close();
  }, 60_000);

  it('approve a paper trade from the button and see the fill; deny another and nothing runs', async () => {
    const buy = { symbol: 'ETH', amountUsd: 50, intent: 'buy 50 USD of ETH', slippageBps: 50, confirm: true };
    const url = await start([
      { toolCalls: [{ toolName: 'buy_token', input: buy }] },
      { text: 'Bought $50 of ETH on paper.' },
      { toolCalls: [{ toolName: 'buy_token', input: { ...buy, amountUsd: 40, intent: 'buy 40 USD of ETH' } }] },
      { text: 'OK, I did not buy.' },
    ]);
    const page = await open(url);
    await send(page, 'Buy $50 of ETH');
    await page.getByRole('button', { name: 'Approve' }).waitFor();
    await shot(page, 'approval-requested');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Bought $50 of ETH on paper.').waitFor();
    const card = await page.getByTestId('tool-card').first().textContent();
    expect(card).toContain('output-available');
    expect(card).toMatch(/filled/);
    await shot(page, 'approved-fill');
    await page.close();

    const second = await open(url);
    await send(second, 'Buy $40 of ETH');
    await second.getByRole('button', { name: 'Deny' }).click();
    await second.getByText('OK, I did not buy.').waitFor();
    await expect(second.getByTestId('tool-card').first().textContent()).resolves.toContain('Denied');
    await second.close();
  }, 60_000);

  it('an artifact renders inline: the chart drawn by Vega in a sandboxed frame', async () => {
    const values = Array.from({ length: 60 }, (_, i) => ({ day: i, equity: 10_000 + i * 25 }));
    const url = await start([
      { toolCalls: [{ toolName: 'create_chart', input: { title: 'Equity <b>curve</b>', spec: { data: { values }, mark: 'line', encoding: { x: { field: 'day', type: 'quantitative' }, y: { field: 'equity', type: 'quantitative' } } } } }] },
      (call) => ({ text: `Here is the equity curve: ${JSON.stringify(call.prompt).match(/chart:\/\/x-[a-z0-9]+/)?.[0] ?? 'missing'}` }),
    ]);
    const page = await open(url);
    await send(page, 'Chart my equity');
    const frameEl = page.getByTestId('artifact-frame');
    await frameEl.waitFor();
    const frame = page.frameLocator('[data-testid="artifact-frame"]');
    await frame.locator('body[data-rendered="1"]').waitFor({ timeout: 20_000 });
    expect(await frame.locator('#chart svg path').count()).toBeGreaterThan(0);
    // The title is text, not markup.
    expect(await frame.locator('h1').textContent()).toBe('Equity <b>curve</b>');
    expect(await frame.locator('h1 b').count()).toBe(0);
    await shot(page, 'artifact-chart');
    await page.close();
  }, 60_000);

  it('a reload mid-answer resumes the stream and the answer finishes', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `Sentence ${i + 1} of a long answer.`).join(' ');
    const url = await start([{ text: long }], { chunkDelayMs: 60 });
    const page = await open(url);
    await send(page, 'Tell me something long');
    await page.getByText('Sentence 2 of', { exact: false }).waitFor();
    await page.reload();
    await page.getByText('Sentence 40 of a long answer.', { exact: false }).waitFor({ timeout: 30_000 });
    // One assistant message, not two: the reload picked up the same turn.
    expect(await page.locator('[data-role="assistant"]').count()).toBe(1);
    await page.close();
  }, 60_000);

  it('memory: add, search, edit, delete and restore', async () => {
    const page = await open(`${await start([])}#/memory`);
    await page.getByLabel('new memory').fill('Prefers limit orders over market orders.');
    await page.getByRole('button', { name: 'Add' }).click();
    await page.getByText('Prefers limit orders over market orders.').waitFor();
    await page.getByLabel('search').fill('limit orders');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('edit memory').fill('Prefers limit orders, always.');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Prefers limit orders, always.').waitFor();
    await page.getByLabel('search').fill('');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Restore' }).click();
    await page.getByTestId('memories').getByText('Prefers limit orders, always.').waitFor();
    await shot(page, 'memory');
    await page.close();
  }, 60_000);

  it('workspace: a save from a stale tab shows the 409 and a merge view', async () => {
    const url = `${await start([])}#/workspace`;
    const [a, b] = [await open(url), await open(url)];
    for (const p of [a, b]) await p.getByRole('button', { name: /^USER\.md/ }).click();
    await a.getByLabel('file content').fill('# User\nTab A wrote this.\n');
    await a.getByRole('button', { name: 'Save' }).click();
    await a.getByText('Saved USER.md.').waitFor();
    await b.getByLabel('file content').fill('# User\nTab B wrote this.\n');
    await b.getByRole('button', { name: 'Save' }).click();
    await b.getByTestId('merge').waitFor();
    expect(await b.getByTestId('merge').textContent()).toContain('Tab A wrote this.');
    await shot(b, 'workspace-conflict');
    await b.getByRole('button', { name: 'Keep mine' }).click();
    await b.getByText('Saved USER.md.').waitFor();
    await a.close();
    await b.close();
  }, 60_000);

  it('updates: an answer the agent delivered by itself shows as a count in the bell and opens its session', async () => {
    const url = await start([{ text: 'BTC funding flipped negative overnight; worth a look.' }], {
      onApp: async (app) => {
        await app.runtime.generate({ sessionId: 'heartbeat-2026-11-24', source: 'heartbeat', surface: 'background', message: 'Standing tasks: watch BTC funding' });
      },
    });
    const page = await open(url);
    const bell = page.getByRole('button', { name: 'updates' });
    await bell.waitFor();
    await page.locator('.badge', { hasText: '1' }).waitFor();
    await bell.click();
    await page.getByText('BTC funding flipped negative overnight').waitFor();
    await shot(page, 'deliveries');
    await page.locator('.delivery').first().click();
    await page.waitForURL(/#\/chat\/heartbeat-2026-11-24$/);
    await page.getByText('BTC funding flipped negative overnight').first().waitFor();
    // Seen: after a reload the count is gone.
    await page.reload();
    await bell.waitFor();
    expect(await page.locator('.badge').count()).toBe(0);
    await page.close();
  }, 60_000);

  it('approvals page and the no-model panel', async () => {
    const page = await open(`${await start([], { noModel: true })}#/approvals`);
    await page.getByText('Nothing is waiting for you.').waitFor();
    await shot(page, 'approvals');
    await page.goto(page.url().replace(/#.*$/, '#/chat'));
    await page.getByTestId('no-model').waitFor();
    expect(await page.getByTestId('no-model').textContent()).toContain('MINARA_MODEL');
    await shot(page, 'no-model');
    await page.close();
  }, 60_000);
});
