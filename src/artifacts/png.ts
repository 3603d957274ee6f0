import { existsSync } from 'node:fs';
import { findChromium } from '../tools/browser-tools';

/** Renders a viewer page to PNG; `close` releases the browser. */
export interface ChartPngRenderer {
  /** The PNG of the chart in `html` (the `#chart` element, at 2× device scale). */
  render(html: string): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** Where a system Chromium usually is. */
export const CHROMIUM_PATHS: readonly string[] = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

/** The given path when it exists (and only it), else the system Chromium as the browser tool finds it, else the first of {@link CHROMIUM_PATHS}. */
function chromiumFor(explicit?: string): string | undefined {
  if (explicit) return existsSync(explicit) ? explicit : undefined;
  return findChromium() ?? CHROMIUM_PATHS.find((p) => existsSync(p));
}

/**
 * A PNG renderer on headless Chromium driven by `playwright-core` (loaded only here, only when asked). Returns
 * the reason instead when Chromium or playwright-core is missing, so the caller logs `chart_png_skipped`.
 */
export async function launchChartPngRenderer(options: { readonly executablePath?: string | undefined; readonly timeoutMs?: number | undefined } = {}): Promise<ChartPngRenderer | { readonly unavailable: string }> {
  const executablePath = chromiumFor(options.executablePath);
  if (!executablePath) return { unavailable: options.executablePath ? `no Chromium at ${options.executablePath}` : `no Chromium found (looked at ${CHROMIUM_PATHS.join(', ')}); apt-get install -y chromium` };
  let chromium: typeof import('playwright-core').chromium;
  try {
    const specifier = 'playwright-core';
    ({ chromium } = (await import(specifier)) as typeof import('playwright-core'));
  } catch {
    return { unavailable: 'playwright-core is not installed (npm install playwright-core)' };
  }
  const timeout = options.timeoutMs ?? 15_000;
  let browser: import('playwright-core').Browser;
  try {
    browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage'], timeout });
  } catch (error) {
    return { unavailable: `Chromium did not start: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}` };
  }
  const context = await browser.newContext({ deviceScaleFactor: 2, viewport: { width: 1000, height: 700 }, offline: true, javaScriptEnabled: true });
  // Nothing leaves the page: every request is refused (the viewer is self-contained).
  await context.route('**/*', (route) => (route.request().url().startsWith('data:') ? route.continue() : route.abort()));
  return {
    async render(html) {
      const page = await context.newPage();
      try {
        await page.setContent(html, { waitUntil: 'load', timeout });
        await page.waitForSelector('body[data-rendered]', { timeout });
        const state = await page.getAttribute('body', 'data-rendered');
        if (state !== '1') throw new Error(`the chart did not render: ${(await page.textContent('#chart'))?.slice(0, 200) ?? 'unknown error'}`);
        return new Uint8Array(await page.locator('#chart').screenshot({ type: 'png', timeout }));
      } finally {
        await page.close();
      }
    },
    async close() {
      await browser.close();
    },
  };
}
