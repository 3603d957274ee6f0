/**
 * `minara demo`: a scripted REPL session, offline, with no model key, in a throwaway data directory. The
 * scripted model plays the agent; the real REPL, runtime, tool gate, paper-trading pack and memory do
 * everything else, so the transcript is exactly what a user would see:
 *
 *   1. "What's BTC trading at?"              → get_price
 *   2. "Remember that I prefer 0.5% slippage" → memory_write
 *   3. "Buy $50 of ETH"                        → buy_token preview, then confirm: true → approval → "y" → filled
 *   4. /new, "What slippage do I like?"        → the preference is in the new session's memory snapshot
 *
 * The exit code is 0 only when every step behaved as expected, so CI catches regressions.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { createScriptedModel, type ScriptedCall } from '@minara/agent/testing';
import { buildApp } from './app';
import { runRepl } from './repl';

/** What the user "types", in order. `y` answers the approval prompt. */
export const DEMO_INPUT = ["What's BTC trading at?", 'Remember that I prefer 0.5% slippage', 'Buy $50 of ETH', 'y', '/new', 'What slippage do I like?', '/exit'];

/** The last tool result the model received, as the envelope object. */
function lastToolOutput(call: ScriptedCall): Record<string, unknown> | undefined {
  for (let i = call.prompt.length - 1; i >= 0; i--) {
    const m = call.prompt[i]!;
    if (m.role !== 'tool') continue;
    const part = m.content.at(-1);
    if (part?.type === 'tool-result' && part.output.type === 'json') return part.output.value as Record<string, unknown>;
    return undefined;
  }
  return undefined;
}

const systemText = (call: ScriptedCall) =>
  call.prompt
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n');

const num = (v: unknown, digits: number) => (typeof v === 'number' ? v.toLocaleString('en-US', { maximumFractionDigits: digits }) : '?');

/** The scripted agent: one entry per model call of the story. */
function demoScript(checks: { rememberedInNewSession: boolean }) {
  const buy = { symbol: 'ETH', amountUsd: 50, intent: 'buy 50 USD of ETH', slippageBps: 50 };
  return createScriptedModel([
    // 1. price
    { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] },
    (call) => {
      const data = (lastToolOutput(call)?.['data'] ?? {}) as Record<string, unknown>;
      return { text: `BTC is trading at $${num(data['priceUsd'], 2)} (simulated paper market).` };
    },
    // 2. memory
    { toolCalls: [{ toolName: 'memory_write', input: { category: 'preference', content: 'The user prefers 0.5% slippage on trades.' } }] },
    { text: "Noted: you prefer 0.5% slippage. I'll remember it in future sessions." },
    // 3. buy: preview, then the confirmed call, which stops for the user's approval
    { toolCalls: [{ toolName: 'buy_token', input: buy }] },
    { toolCalls: [{ toolName: 'buy_token', input: { ...buy, confirm: true } }] },
    (call) => {
      const out = lastToolOutput(call);
      const data = (out?.['data'] ?? {}) as Record<string, unknown>;
      const fill = (data['fill'] ?? {}) as Record<string, unknown>;
      return out?.['ok'] === true
        ? { text: `Done: bought ${num(fill['qty'] ?? fill['quantity'], 6)} ETH for $50 at 0.5% max slippage (paper trade).` }
        : { text: `The order did not go through: ${String(out?.['error'] ?? 'unknown error')}.` };
    },
    // 4. a new session: the preference is in the frozen memory snapshot of its system prompt
    (call) => {
      checks.rememberedInNewSession = /0\.5% slippage/.test(systemText(call));
      return { text: checks.rememberedInNewSession ? 'You like 0.5% slippage — I remembered it from our last session.' : "I don't know yet." };
    },
  ]);
}

/**
 * Run the demo, writing the transcript to `io.write`. Resolves to the exit code: 0 when every step
 * behaved as expected.
 */
export async function runDemo(io: { write: (s: string) => void }): Promise<number> {
  const started = Date.now();
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-demo-'));
  const checks = { rememberedInNewSession: false };
  const model = demoScript(checks);
  let transcript = '';
  const output = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      const s = chunk.toString();
      transcript += s;
      io.write(s);
      done();
    },
  });
  io.write(`minara demo: a scripted session, offline, no model key (data in ${dir})\n\n`);
  const app = await buildApp({ dataDir: dir }, { model, env: {}, envFileDir: false, finance: { provider: 'paper' } });
  try {
    const input = new PassThrough();
    input.end(`${DEMO_INPUT.join('\n')}\n`);
    const { sessions } = await runRepl({ app, input, output, isTTY: false, historyFile: false });

    // Check each step against what actually happened.
    const audit = (await app.tools.queryAudit({ limit: 50 })).reverse();
    const decisions = (tool: string) => audit.filter((r) => r.toolName === tool).map((r) => r.decision);
    const memories = await app.memory.search('slippage', { limit: 5 });
    const results: Array<[string, boolean]> = [
      ['1. get_price answered', decisions('get_price').includes('allowed') && /BTC is trading at \$\d/.test(transcript)],
      ['2. the preference was saved to memory', memories.some((m) => m.content.includes('0.5% slippage'))],
      ['3. buy_token previewed, asked for approval, then filled once', /✓ buy_token → Preview \(nothing moved\): Buy \$50\.00 of ETH at ~\$/.test(transcript) && /⏸ Buy \$50\.00 of ETH at ~\$[\d,]+, fee \$[\d.]+/.test(transcript) && /buy_token needs your approval/.test(transcript) && decisions('buy_token').filter((d) => d === 'approved').length === 1 && /Done: bought/.test(transcript)],
      ['4. the new session remembered the preference', sessions.length === 2 && checks.rememberedInNewSession && /You like 0\.5% slippage/.test(transcript)],
    ];
    let consumed = true;
    try {
      model.assertConsumed();
    } catch {
      consumed = false;
    }
    results.push(['the scripted model was used exactly as planned', consumed]);
    io.write('\nChecks:\n');
    for (const [label, ok] of results) io.write(`  ${ok ? '✓' : '✗'} ${label}\n`);
    const passed = results.every(([, ok]) => ok);
    io.write(`\n${passed ? 'Demo passed' : 'Demo FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s.\n`);
    return passed ? 0 : 1;
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
