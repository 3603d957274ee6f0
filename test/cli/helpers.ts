import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { z } from 'zod';
import { type AppPack, defineTool, type MinaraApp, PermissionTier } from '@minara/agent';
import type { ScriptedModel } from '@minara/agent/testing';
import { buildApp } from '../../cli/app';
import { runRepl, type ReplResult } from '../../cli/repl';

/** A small, fixed tool pack so screen assertions do not depend on the finance pack's numbers. */
export function testPack(fills: string[]): AppPack {
  return {
    tools: [
      defineTool({
        name: 'get_price',
        toolSet: 'read',
        description: 'Spot price of a token in USD',
        inputSchema: z.object({ symbol: z.string() }),
        permissionTier: PermissionTier.READ_ONLY,
        execute: ({ symbol }) => ({ symbol, priceUsd: symbol === 'BTC' ? 97_250 : 3_410 }),
      }),
      defineTool({
        name: 'buy_token',
        toolSet: 'read',
        description: 'Buy a token with USDC',
        inputSchema: z.object({ symbol: z.string(), amountUsd: z.number().positive() }),
        permissionTier: PermissionTier.CONFIRM_ONCE,
        isFundMoving: true,
        orderFacts: ({ symbol, amountUsd }) => ({ notionalUsd: amountUsd, asset: symbol, side: 'buy' }),
        preview: ({ symbol, amountUsd }) => ({ preview: true, symbol, amountUsd }),
        execute: ({ symbol, amountUsd }) => {
          fills.push(`${symbol}:${amountUsd}`);
          return { filled: true, symbol, amountUsd };
        },
      }),
    ],
  };
}

export interface TestRepl {
  readonly app: MinaraApp;
  readonly dir: string;
  readonly fills: string[];
  /** Everything written to the screen so far. */
  screen(): string;
  /** Type one line (as if Enter was pressed). */
  type(line: string): void;
  /** Wait until the screen contains `text` after position `from` (default: anywhere). */
  waitFor(text: string | RegExp, from?: number, timeoutMs?: number): Promise<void>;
  /** End input (Ctrl-D) and wait for the REPL to finish. */
  done(): Promise<ReplResult>;
  close(): Promise<void>;
}

export async function startTestRepl(options: { model?: ScriptedModel; env?: Record<string, string>; handleProcessSignals?: boolean; now?: () => Date; realFinance?: boolean; columns?: number; verbose?: boolean; backgroundInfo?: string } = {}): Promise<TestRepl> {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-cli-test-'));
  const fills: string[] = [];
  const app = await buildApp(
    { dataDir: dir },
    { ...(options.model ? { model: options.model } : {}), ...(options.now ? { now: options.now } : {}), env: options.env ?? {}, envFileDir: false, ...(options.realFinance ? {} : { finance: false, packs: [testPack(fills)] }) },
  );
  const input = new PassThrough();
  const output = new PassThrough();
  let text = '';
  output.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const finished = runRepl({ app, input, output, isTTY: false, historyFile: false, columns: () => options.columns, verbose: options.verbose, backgroundInfo: options.backgroundInfo, handleProcessSignals: options.handleProcessSignals === true, newSessionId: (() => {
    let n = 0;
    return () => `repl-test-${++n}`;
  })() });
  return {
    app,
    dir,
    fills,
    screen: () => text,
    type(line) {
      input.write(`${line}\n`);
    },
    async waitFor(pattern, from = 0, timeoutMs = 10_000) {
      const start = Date.now();
      const hit = () => (typeof pattern === 'string' ? text.indexOf(pattern, from) >= 0 : pattern.test(text.slice(from)));
      while (!hit()) {
        if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${String(pattern)}; screen:\n${text}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    async done() {
      input.end();
      return finished;
    },
    async close() {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
