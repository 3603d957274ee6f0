/**
 * A chart rendered to PNG by the materializer in a real headless Chromium (playwright-core + the system
 * `chromium`). Without Chromium this skips loudly (CI installs it and fails instead): `apt-get install -y chromium`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createArtifactMaterializer, createArtifactStore, findChromium, type Logger } from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { realComponent } from '../support/real-component';
import { lineSpec } from './helpers';

const hasChromium = realComponent('Chromium', findChromium() !== undefined, 'apt-get install -y chromium (Debian), then run the tests again');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function recordingLogger(lines: string[]): Logger {
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) => void lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') } as Logger;
}

describe.skipIf(!hasChromium)('chart PNG in headless Chromium', () => {
  it('renders a 1,000-point chart to a 2x PNG beside its viewer, offline', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-png-'));
    dirs.push(dir);
    const store = createArtifactStore({ storage: createInMemoryStorage() });
    const lines: string[] = [];
    const m = createArtifactMaterializer({ store, dir, logger: recordingLogger(lines) });
    try {
      const chart = await store.createChart({ userId: 'u1' }, { title: 'Equity curve', spec: lineSpec(1000) });
      const [w] = await m.materialize({ userId: 'u1' }, `See ${chart.uri}`);
      expect(lines.filter((l) => l.includes('chart_png_skipped'))).toEqual([]);
      const png = readFileSync(w!.png!);
      expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      const width = png.readUInt32BE(16);
      const height = png.readUInt32BE(20);
      // Vega's default 200x200 plot plus axes and title, at device scale 2.
      expect(width).toBeGreaterThan(400);
      expect(height).toBeGreaterThan(400);
      expect(png.length).toBeGreaterThan(5_000);
      expect(readFileSync(w!.html, 'utf8')).toContain('href="chart.png"');
    } finally {
      await m.close();
    }
  }, 60_000);
});

describe('chart PNG without Chromium', () => {
  it('logs chart_png_skipped and still writes the viewer and the JSON', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-png-'));
    dirs.push(dir);
    const store = createArtifactStore({ storage: createInMemoryStorage() });
    const lines: string[] = [];
    const m = createArtifactMaterializer({ store, dir, logger: recordingLogger(lines), chromiumPath: path.join(dir, 'no-such-chromium') });
    const chart = await store.createChart({ userId: 'u1' }, { title: 'c', spec: lineSpec(10) });
    const [w] = await m.materialize({ userId: 'u1' }, chart.uri);
    expect(w!.png).toBeUndefined();
    expect(lines.some((l) => l.startsWith('info chart_png_skipped') && l.includes('no-such-chromium'))).toBe(true);
    expect(readFileSync(w!.html, 'utf8')).not.toContain('chart.png');
    await m.close();
  });
});
