import { describe, expect, it } from 'vitest';
import { loadConfig, MinaraError, modelConfigStatus, resolveEmbedder, resolveModel } from '@minara/agent';

describe('model resolution', () => {
  it('reads MINARA_MODEL=provider:model and the usual key names', async () => {
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'anthropic:claude-sonnet-4-5', ANTHROPIC_API_KEY: 'k' } })).toMatchObject({ configured: true, provider: 'anthropic', modelId: 'claude-sonnet-4-5' });
    const m = await resolveModel({ env: { MINARA_MODEL: 'openai:gpt-4.1-mini', OPENAI_API_KEY: 'k' } });
    expect(typeof m === 'object' && m.modelId).toBe('gpt-4.1-mini');
    const local = await resolveModel({ env: { MINARA_MODEL: 'openai-compatible:llama3.1', MINARA_BASE_URL: 'http://127.0.0.1:11434/v1' } });
    expect(typeof local === 'object' && local.modelId).toBe('llama3.1');
    const a = await resolveModel({ env: { MINARA_MODEL: 'anthropic:claude-haiku-4-5', ANTHROPIC_API_KEY: 'k' } });
    expect(typeof a === 'object' && a.provider).toMatch(/anthropic/);
  });

  it('falls back to a provider default when only a key is set; --model wins over env', () => {
    expect(modelConfigStatus({ env: { ANTHROPIC_API_KEY: 'k' } })).toMatchObject({ configured: true, label: 'anthropic:claude-sonnet-4-5' });
    expect(modelConfigStatus({ model: 'openai:gpt-4o', env: { MINARA_MODEL: 'anthropic:x', OPENAI_API_KEY: 'k' } })).toMatchObject({ provider: 'openai', modelId: 'gpt-4o' });
  });

  it('explains what is missing, clearly', async () => {
    expect(modelConfigStatus({ env: {} })).toMatchObject({ configured: false, reason: expect.stringContaining('MINARA_MODEL is not set') });
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'claude' } })).toMatchObject({ configured: false, reason: expect.stringContaining('"provider:model"') });
    // A bare model id is the same not-configured state (never a startup error), with the likely fix.
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'gpt-4o', OPENAI_API_KEY: 'k' } })).toMatchObject({ configured: false, reason: expect.stringContaining('Did you mean MINARA_MODEL=openai:gpt-4o?') });
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'claude-sonnet-4-5' } })).toMatchObject({ configured: false, reason: expect.stringContaining('anthropic:claude-sonnet-4-5') });
    expect(loadConfig({ env: { MINARA_MODEL: 'gpt-4o' } }).model).toBe('gpt-4o');
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'anthropic:x' } })).toMatchObject({ configured: false, reason: expect.stringContaining('ANTHROPIC_API_KEY') });
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'openai-compatible:x' } })).toMatchObject({ configured: false, reason: expect.stringContaining('MINARA_MODEL_BASE_URL') });
    await expect(resolveModel({ env: {} })).rejects.toSatisfy((e) => MinaraError.isInstance(e) && e.code === 'MODEL_NOT_CONFIGURED' && e.message.includes('MINARA_MODEL=anthropic'));
  });

  it('resolves the embedder from EMBEDDING_PROVIDER, disabled by default', async () => {
    expect(await resolveEmbedder({ env: {} })).toBeUndefined();
    expect(await resolveEmbedder({ env: { EMBEDDING_PROVIDER: 'disabled' } })).toBeUndefined();
    const e = await resolveEmbedder({ env: { EMBEDDING_PROVIDER: 'openai', OPENAI_API_KEY: 'k' } });
    expect(typeof e === 'object' && e?.modelId).toBe('text-embedding-3-small');
    await expect(resolveEmbedder({ env: { EMBEDDING_PROVIDER: 'openai' } })).rejects.toThrow(/EMBEDDING_API_KEY/);
    await expect(resolveEmbedder({ env: { EMBEDDING_PROVIDER: 'cohere' } })).rejects.toThrow(/not supported/);
  });
});

describe('openai-compatible servers (Ollama, vLLM, LM Studio)', () => {
  it('asks for usage in the stream (stream_options.include_usage), so turns see real token counts', async () => {
    const { createServer } = await import('node:http');
    const { streamText } = await import('ai');
    const bodies: Array<Record<string, unknown>> = [];
    const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        bodies.push(JSON.parse(raw) as Record<string, unknown>);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const base = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'llama3.1' };
        res.write(chunk({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: null }] }));
        res.write(chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
        // A server sends usage only when asked (the last chunk, with no choices).
        if ((bodies.at(-1)?.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true) {
          res.write(chunk({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } }));
        }
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const model = await resolveModel({ env: { MINARA_MODEL: 'openai-compatible:llama3.1', MINARA_MODEL_BASE_URL: `http://127.0.0.1:${port}/v1` } });
      const result = streamText({ model, prompt: 'hello' });
      expect(await result.text).toBe('hi');
      const usage = await result.usage;
      expect(bodies[0]?.stream_options).toEqual({ include_usage: true });
      expect(usage.inputTokens).toBe(12);
      expect(usage.outputTokens).toBe(3);
    } finally {
      server.close();
    }
  });
});

describe('xAI and OpenRouter (optional peer provider packages)', () => {
  async function recordingServer(reply: (path: string, body: Record<string, unknown>, res: import('node:http').ServerResponse) => void) {
    const { createServer } = await import('node:http');
    const requests: Array<{ path: string; auth: string | undefined; body: Record<string, unknown> }> = [];
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(raw || '{}') as Record<string, unknown>;
        requests.push({ path: req.url ?? '', auth: req.headers.authorization, body });
        reply(req.url ?? '', body, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { requests, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
  }

  it('MINARA_MODEL=xai:… and openrouter:… resolve without a base URL; each needs its own key; bare ids get the fix', () => {
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'xai:grok-4', XAI_API_KEY: 'xk' } })).toEqual({ configured: true, provider: 'xai', modelId: 'grok-4', label: 'xai:grok-4' });
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'openrouter:anthropic/claude-sonnet-4.5', OPENROUTER_API_KEY: 'ok' } })).toMatchObject({ configured: true, provider: 'openrouter', modelId: 'anthropic/claude-sonnet-4.5' });
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'xai:grok-4' } })).toMatchObject({ configured: false, reason: 'MINARA_MODEL uses xai but XAI_API_KEY is not set.' });
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'openrouter:x/y', OPENAI_API_KEY: 'k' } })).toMatchObject({ configured: false, reason: 'MINARA_MODEL uses openrouter but OPENROUTER_API_KEY is not set.' });
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'grok-4' } })).toMatchObject({ configured: false, reason: expect.stringContaining('Did you mean MINARA_MODEL=xai:grok-4?') });
    expect(modelConfigStatus({ env: { MINARA_MODEL: 'meta-llama/llama-3.1-70b' } })).toMatchObject({ configured: false, reason: expect.stringContaining('Did you mean MINARA_MODEL=openrouter:meta-llama/llama-3.1-70b?') });
    expect(modelConfigStatus({ env: {} })).toMatchObject({ help: expect.stringContaining('MINARA_MODEL=xai:grok-4') });
  });

  it('openrouter: a turn streams through the OpenRouter provider with the key sent only to its host, usage included', async () => {
    const { streamText } = await import('ai');
    const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
    const server = await recordingServer((_path, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const base = { id: 'gen-1', object: 'chat.completion.chunk', created: 1, model: 'anthropic/claude-sonnet-4.5' };
      res.write(chunk({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'hello' }, finish_reason: null }] }));
      res.write(chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } }));
      res.end('data: [DONE]\n\n');
    });
    try {
      const model = await resolveModel({ env: { MINARA_MODEL: 'openrouter:anthropic/claude-sonnet-4.5', OPENROUTER_API_KEY: 'or-key', OPENROUTER_BASE_URL: `${server.url}/api/v1` } });
      expect(typeof model === 'object' && model.modelId).toBe('anthropic/claude-sonnet-4.5');
      const result = streamText({ model, prompt: 'hi' });
      expect(await result.text).toBe('hello');
      expect((await result.usage).inputTokens).toBe(9);
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]).toMatchObject({ path: '/api/v1/chat/completions', auth: 'Bearer or-key', body: { model: 'anthropic/claude-sonnet-4.5' } });
    } finally {
      await server.close();
    }
  });

  it('xai: the model is the xAI provider (Responses API) and its request goes to the xAI host with its own key', async () => {
    const { generateText } = await import('ai');
    const server = await recordingServer((_path, _body, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'recorded', type: 'invalid_request_error', code: 'bad_request' } }));
    });
    try {
      const model = await resolveModel({ env: { MINARA_MODEL: 'xai:grok-4', XAI_API_KEY: 'xai-key', XAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'must-not-leak' } });
      expect(typeof model === 'object' && [model.provider, model.modelId]).toEqual(['xai.responses', 'grok-4']);
      await expect(generateText({ model, prompt: 'hi', maxRetries: 0 })).rejects.toThrow(/recorded/);
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]).toMatchObject({ path: '/v1/responses', auth: 'Bearer xai-key', body: { model: 'grok-4' } });
      expect(JSON.stringify(server.requests)).not.toContain('must-not-leak');
    } finally {
      await server.close();
    }
  });
});
