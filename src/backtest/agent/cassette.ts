import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4Content, LanguageModelV4GenerateResult, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { createTwoFilesPatch } from 'diff';
import { MinaraError } from '../../errors/minara-error';
import { canonicalHash, canonicalJson, canonicalize, reviveCanonical } from './canonical-json';

/** The fields of a model call that decide its answer, in canonical form (what a cassette key hashes). */
export interface CassetteRequest {
  /** `provider:modelId` of the wrapped model. */
  readonly model: string;
  readonly kind: 'generate' | 'stream';
  readonly prompt: unknown;
  readonly tools?: unknown;
  readonly toolChoice?: unknown;
  /** Sampling and output settings (temperature, maxOutputTokens, seed, topP, topK, stop sequences, response format, provider options). */
  readonly settings: Readonly<Record<string, unknown>>;
}

/** One recorded call: the request, its key and the answer (canonical JSON; dates and bytes encoded). */
export interface CassetteEntry {
  /** sha256 of the canonical request. */
  readonly key: string;
  readonly request: CassetteRequest;
  /** `doGenerate`'s result (without the raw request/response bodies), or the stream's parts in order. */
  readonly response: { readonly generate: unknown } | { readonly stream: readonly unknown[] };
}

/** A cassette file: every call of one or more runs, in recording order. */
export interface CassetteFile {
  readonly format: 'minara-cassette';
  readonly version: 1;
  readonly entries: readonly CassetteEntry[];
}

/** How a cassette model answers: from the wrapped model while recording, from the file when replaying. */
export type CassetteMode = 'record' | 'replay' | 'auto';

/** Options of {@link createCassetteModel}. */
export interface CassetteModelOptions {
  /** The model to record (required for `record` and `auto`; never called in `replay`). */
  readonly model?: LanguageModelV4 | undefined;
  /**
   * `replay`: answer only from the cassette, never the network; a call with no recording throws `CASSETTE_MISS`
   * with a diff against the nearest recorded request. `record`: call the model and record every call (replacing
   * the cassette on `save()`). `auto`: replay what is recorded, record what is not. @default 'replay'
   */
  readonly mode?: CassetteMode | undefined;
  /** The cassette: a file path (read when it exists; written by `save()`) or a loaded {@link CassetteFile}. */
  readonly cassette: string | CassetteFile;
  /** Model id reported in replay when no model is given. @default the first recording's model */
  readonly modelId?: string | undefined;
  /**
   * How a request is normalised before it is hashed: random ids the runtime generates (approval, trace and turn
   * ids such as `apr_k3x9…`) differ between two runs of the same backtest, so by default each distinct one becomes
   * `<prefix>_#<n>` in order of appearance. `false` hashes requests exactly as sent. @default normaliseGeneratedIds
   */
  readonly normalize?: false | ((request: CassetteRequest) => CassetteRequest) | undefined;
}

const GENERATED_ID = /\b([a-z]{2,12})_([a-z0-9]{20,})\b/g;

/**
 * Replace every generated id in a request (`<prefix>_<20+ lowercase letters or digits>`, the form of the runtime's
 * id generator) with `<prefix>_#<n>`, numbered by first appearance, so a replay matches the recording.
 */
export function normaliseGeneratedIds(request: CassetteRequest): CassetteRequest {
  return JSON.parse(normaliseIdsInText(canonicalJson(request)).text) as CassetteRequest;
}

/** Is the JSON string around `at` an object key (its closing quote followed by `:`)? */
function inKey(text: string, at: number): boolean {
  let i = at;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return text[i + 1] === ':';
}

/** {@link normaliseGeneratedIds} on JSON text; `inKeys` says whether an id was replaced inside an object key. */
function normaliseIdsInText(json: string): { readonly text: string; readonly inKeys: boolean } {
  const seen = new Map<string, string>();
  let inKeys = false;
  const text = json.replace(GENERATED_ID, (id: string, prefix: string, _tail: string, offset: number) => {
    let out = seen.get(id);
    if (out === undefined) seen.set(id, (out = `${prefix}_#${seen.size + 1}`));
    if (!inKeys && inKey(json, offset + id.length)) inKeys = true;
    return out;
  });
  return { text, inKeys };
}

/**
 * The default normalisation and key of a call in one pass over its canonical JSON: the same request and key as
 * `normaliseGeneratedIds` then `cassetteKey` (the canonical text is hashed as it is unless an id was replaced inside
 * an object key, which could change the key order; then it is canonicalised again), without re-canonicalising the
 * prompt and tools twice more per call. `request` is parsed only when asked for (a recording, a miss).
 */
function defaultKeyed(request: CassetteRequest): { readonly key: string; readonly request: () => CassetteRequest } {
  const { text, inKeys } = normaliseIdsInText(JSON.stringify(request));
  let parsed: CassetteRequest | undefined;
  const get = () => (parsed ??= JSON.parse(text) as CassetteRequest);
  return { key: inKeys ? cassetteKey(get()) : createHash('sha256').update(text).digest('hex'), request: get };
}

/** A language model that records to, or replays from, a cassette. */
export interface CassetteModel extends LanguageModelV4 {
  /** Calls answered from the cassette and calls recorded, so far. */
  readonly stats: { readonly replayed: number; readonly recorded: number };
  /** The cassette as it stands (recorded entries included). */
  toFile(): CassetteFile;
  /** Write the cassette to its path (stable JSON: same calls, same bytes); returns the path. */
  save(path?: string): string;
}

const SETTING_KEYS = ['maxOutputTokens', 'temperature', 'stopSequences', 'topP', 'topK', 'presencePenalty', 'frequencyPenalty', 'responseFormat', 'seed', 'reasoning', 'providerOptions'] as const;

/** The canonical request of a call: what the key hashes. Headers, abort signals and callbacks are left out. */
export function cassetteRequest(modelName: string, kind: 'generate' | 'stream', options: LanguageModelV4CallOptions): CassetteRequest {
  const settings: Record<string, unknown> = {};
  const opts = options as unknown as Record<string, unknown>;
  for (const k of SETTING_KEYS) if (opts[k] !== undefined) settings[k] = opts[k];
  return canonicalize({ model: modelName, kind, prompt: options.prompt, tools: options.tools, toolChoice: options.toolChoice, settings }) as CassetteRequest;
}

/** The key of a canonical request (sha256 hex). */
export function cassetteKey(request: CassetteRequest): string {
  return canonicalHash(request);
}

/** Read and check a cassette file; a malformed file fails naming what is wrong. */
export function loadCassette(path: string): CassetteFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new MinaraError('INVALID_ARGUMENT', `cassette ${path}: cannot read it as JSON (${(error as Error).message})`);
  }
  return checkCassette(parsed, path);
}

function checkCassette(value: unknown, where: string): CassetteFile {
  const file = value as Partial<CassetteFile> | null;
  if (!file || file.format !== 'minara-cassette' || file.version !== 1 || !Array.isArray(file.entries)) {
    throw new MinaraError('INVALID_ARGUMENT', `cassette ${where}: expected { format: "minara-cassette", version: 1, entries: [...] }`);
  }
  file.entries.forEach((e, i) => {
    if (!e || typeof e.key !== 'string' || !e.request || !e.response) throw new MinaraError('INVALID_ARGUMENT', `cassette ${where}: entries[${i}] needs key, request and response`);
  });
  return file as CassetteFile;
}

/** A readable line diff of the missed request against the nearest recorded one. */
function nearestDiff(request: CassetteRequest, entries: readonly CassetteEntry[]): string {
  if (entries.length === 0) return 'The cassette has no recordings.';
  const want = canonicalJson(request, 2).split('\n');
  const wantSet = new Map<string, number>();
  for (const l of want) wantSet.set(l, (wantSet.get(l) ?? 0) + 1);
  let best: CassetteEntry = entries[0]!;
  let bestScore = -1;
  for (const e of entries) {
    const counts = new Map(wantSet);
    let common = 0;
    for (const l of canonicalJson(e.request, 2).split('\n')) {
      const c = counts.get(l) ?? 0;
      if (c > 0) {
        common++;
        counts.set(l, c - 1);
      }
    }
    if (common > bestScore) {
      bestScore = common;
      best = e;
    }
  }
  const patch = createTwoFilesPatch(`recorded ${best.key.slice(0, 12)}`, 'this call', canonicalJson(best.request, 2) + '\n', want.join('\n') + '\n', undefined, undefined, { context: 2 });
  const lines = patch.split('\n');
  return lines.length > 80 ? `${lines.slice(0, 80).join('\n')}\n… (${lines.length - 80} more diff lines)` : patch;
}

/**
 * Wrap any AI SDK language model (v4 spec) so every call is recorded to a cassette keyed by the sha256 of the
 * canonical request (model id, prompt, tools, tool choice and settings, keys in stable order), or replayed from one
 * with no network. Identical requests replay in the order they were recorded (the last recording answers again
 * once they are used up). In `replay` a call with no recording throws `MinaraError('CASSETTE_MISS')` whose message
 * carries a diff against the nearest recorded request. Anchors: Polly.js / nock's recorder, Inspect AI's model cache.
 *
 * @example
 * ```ts
 * const recorder = createCassetteModel({ model: anthropic('claude-sonnet-4-5'), mode: 'record', cassette: 'fixtures/run.cassette.json' });
 * // … run the backtest with `recorder` as the model …
 * recorder.save();
 * const replay = createCassetteModel({ cassette: 'fixtures/run.cassette.json' }); // offline, byte-identical answers
 * ```
 */
export function createCassetteModel(options: CassetteModelOptions): CassetteModel {
  const { model, mode = 'replay' } = options;
  if (mode !== 'replay' && mode !== 'record' && mode !== 'auto') throw new MinaraError('INVALID_ARGUMENT', `createCassetteModel: mode must be 'record', 'replay' or 'auto', got ${String(mode)}`);
  if (mode !== 'replay' && !model) throw new MinaraError('INVALID_ARGUMENT', `createCassetteModel: mode '${mode}' needs the model to record (options.model)`);
  const path = typeof options.cassette === 'string' ? options.cassette : undefined;
  const fromFile = typeof options.cassette === 'string' && existsSync(options.cassette) && mode !== 'record';
  const loaded: CassetteFile =
    typeof options.cassette === 'string'
      ? fromFile
        ? loadCassette(options.cassette)
        : { format: 'minara-cassette', version: 1, entries: [] }
      : checkCassette(options.cassette, '(object)');
  if (mode === 'replay' && typeof options.cassette === 'string' && !existsSync(options.cassette)) {
    throw new MinaraError('INVALID_ARGUMENT', `createCassetteModel: no cassette at ${options.cassette} (record one with mode 'record')`);
  }
  /** What a lookup needs of a recording: its answer (the request is only for explaining a miss and for saving). */
  type Recording = Pick<CassetteEntry, 'key' | 'response'>;
  const byKey = new Map<string, Recording[]>();
  for (const e of loaded.entries) byKey.set(e.key, [...(byKey.get(e.key) ?? []), { key: e.key, response: e.response }]);
  const firstModel = loaded.entries[0]?.request.model;
  // A replay from a file keeps only each recording's answer: the requests (nearly all of a cassette's bytes, about
  // 20 KB a call) are read again from the file only to explain a miss, so a long run's heap, and the time its garbage
  // collections take, stay small. Otherwise the loaded entries are kept (they are saved again with new recordings).
  const cassettePath = typeof options.cassette === 'string' ? options.cassette : undefined;
  const loadedEntries: () => readonly CassetteEntry[] = mode === 'replay' && fromFile && cassettePath !== undefined ? () => loadCassette(cassettePath).entries : ((kept) => () => kept)(loaded.entries);
  const used = new Map<string, number>();
  const recorded: CassetteEntry[] = [];
  const stats = { replayed: 0, recorded: 0 };
  const provider = model?.provider ?? 'cassette';
  const modelId = model?.modelId ?? options.modelId ?? (firstModel?.split(':').slice(1).join(':') || 'cassette');
  const name = `${provider}:${modelId}`;
  const modelName = model ? `${model.provider}:${model.modelId}` : (firstModel ?? name);
  const normalize = options.normalize === false ? (r: CassetteRequest) => r : options.normalize;
  // The request (normalised) and its key; the default normalisation works on the canonical text in one pass.
  const keyed = (kind: 'generate' | 'stream', opts: LanguageModelV4CallOptions): { readonly key: string; readonly request: () => CassetteRequest } => {
    const canonical = cassetteRequest(modelName, kind, opts);
    if (!normalize) return defaultKeyed(canonical);
    const request = normalize(canonical);
    return { key: cassetteKey(request), request: () => request };
  };

  const lookup = (key: string): Recording | undefined => {
    const list = byKey.get(key);
    if (!list || list.length === 0) return undefined;
    const n = used.get(key) ?? 0;
    used.set(key, n + 1);
    return list[Math.min(n, list.length - 1)];
  };
  const miss = (request: CassetteRequest, key: string): never => {
    throw new MinaraError('CASSETTE_MISS', `cassette miss: no recording for this ${request.kind} call to ${request.model} (key ${key.slice(0, 12)}); nothing was sent to a model. Nearest recording:\n${nearestDiff(request, [...loadedEntries(), ...recorded])}`);
  };
  const remember = (entry: CassetteEntry) => {
    recorded.push(entry);
    byKey.set(entry.key, [...(byKey.get(entry.key) ?? []), entry]);
    used.set(entry.key, (used.get(entry.key) ?? 0) + 1);
    stats.recorded++;
  };

  /** The same request recorded the other way (streamed for a generate call, or not): its entry, if any. */
  const otherKind = (kind: 'generate' | 'stream', opts: LanguageModelV4CallOptions): Recording | undefined => (mode === 'record' ? undefined : lookup(keyed(kind, opts).key));

  const doGenerate = async (opts: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> => {
    const { key, request } = keyed('generate', opts);
    const hit = mode === 'record' ? undefined : lookup(key);
    if (hit && 'generate' in hit.response) {
      stats.replayed++;
      return reviveCanonical(hit.response.generate) as LanguageModelV4GenerateResult;
    }
    // A call recorded streamed answers the same request asked without streaming (runs record either way).
    const streamed = hit ? undefined : otherKind('stream', opts);
    if (streamed && 'stream' in streamed.response) {
      stats.replayed++;
      return generateResultOf(reviveCanonical(streamed.response.stream) as LanguageModelV4StreamPart[]);
    }
    if (mode === 'replay') return miss(request(), key);
    const result = await model!.doGenerate(opts);
    const { request: _req, response, ...rest } = result;
    const kept = { ...rest, ...(response ? { response: { ...response, body: undefined, headers: undefined } } : {}) };
    remember({ key, request: request(), response: { generate: canonicalize(kept) } });
    return result;
  };

  const doStream = async (opts: LanguageModelV4CallOptions) => {
    const { key, request } = keyed('stream', opts);
    const hit = mode === 'record' ? undefined : lookup(key);
    const generated = hit ? undefined : otherKind('generate', opts);
    const recordedParts = hit && 'stream' in hit.response ? (reviveCanonical(hit.response.stream) as LanguageModelV4StreamPart[]) : generated && 'generate' in generated.response ? streamPartsOf(reviveCanonical(generated.response.generate) as LanguageModelV4GenerateResult) : undefined;
    if (recordedParts) {
      stats.replayed++;
      const parts = recordedParts.slice();
      let i = 0;
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          pull(controller) {
            if (i < parts.length) controller.enqueue(parts[i++]!);
            else controller.close();
          },
        }),
      };
    }
    if (mode === 'replay') return miss(request(), key);
    const result = await model!.doStream(opts);
    const parts: unknown[] = [];
    const recorder = new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
      transform(part, controller) {
        if (part.type !== 'raw') parts.push(canonicalize(part));
        controller.enqueue(part);
      },
      flush() {
        // Only a stream read to its end is recorded (a cancelled or failed one would replay a truncated answer).
        remember({ key, request: request(), response: { stream: parts } });
      },
    });
    return { ...result, stream: result.stream.pipeThrough(recorder) };
  };

  const toFile = (): CassetteFile => ({ format: 'minara-cassette', version: 1, entries: mode === 'record' ? recorded : [...loadedEntries(), ...recorded] });
  return {
    specificationVersion: 'v4',
    provider,
    modelId,
    supportedUrls: model?.supportedUrls ?? {},
    doGenerate,
    doStream,
    get stats() {
      return { ...stats };
    },
    toFile,
    save(to = path) {
      if (!to) throw new MinaraError('INVALID_ARGUMENT', 'CassetteModel.save: the cassette was given as an object; pass a path to save to');
      mkdirSync(dirname(to), { recursive: true });
      writeFileSync(to, `${canonicalJson(toFile(), 1)}\n`);
      return to;
    },
  };
}

/**
 * A recorded stream as `doGenerate`'s result: text and reasoning deltas joined per block, tool calls and the
 * other content parts in order, the finish part's reason, usage and metadata. An error part throws, as the stream did.
 */
export function generateResultOf(parts: readonly LanguageModelV4StreamPart[]): LanguageModelV4GenerateResult {
  const content: LanguageModelV4Content[] = [];
  const open = new Map<string, { type: 'text' | 'reasoning'; text: string }>();
  const block = (type: 'text' | 'reasoning', id: string) => {
    let b = open.get(`${type}:${id}`);
    if (!b) {
      b = { type, text: '' };
      open.set(`${type}:${id}`, b);
      content.push(b as LanguageModelV4Content);
    }
    return b;
  };
  let finish: Extract<LanguageModelV4StreamPart, { type: 'finish' }> | undefined;
  let warnings: LanguageModelV4GenerateResult['warnings'] = [];
  let response: LanguageModelV4GenerateResult['response'];
  for (const p of parts) {
    switch (p.type) {
      case 'stream-start': warnings = p.warnings; break;
      case 'response-metadata': response = { ...(p.id !== undefined ? { id: p.id } : {}), ...(p.timestamp !== undefined ? { timestamp: p.timestamp } : {}), ...(p.modelId !== undefined ? { modelId: p.modelId } : {}) }; break;
      case 'text-start': block('text', p.id); break;
      case 'text-delta': block('text', p.id).text += p.delta; break;
      case 'text-end': open.delete(`text:${p.id}`); break;
      case 'reasoning-start': block('reasoning', p.id); break;
      case 'reasoning-delta': block('reasoning', p.id).text += p.delta; break;
      case 'reasoning-end': open.delete(`reasoning:${p.id}`); break;
      case 'finish': finish = p; break;
      case 'error': throw p.error;
      case 'tool-call': case 'tool-result': case 'source': case 'file': content.push(p as LanguageModelV4Content); break;
      default: break; // tool-input deltas (the tool-call part carries the whole input), raw chunks
    }
  }
  if (!finish) throw new MinaraError('INVALID_ARGUMENT', 'cassette: a recorded stream without its finish part cannot answer a generate call');
  return { content, finishReason: finish.finishReason, usage: finish.usage, warnings, ...(finish.providerMetadata ? { providerMetadata: finish.providerMetadata } : {}), ...(response ? { response } : {}) };
}

/** A recorded `doGenerate` result as the stream a streaming call would have read (one delta per text block). */
export function streamPartsOf(result: LanguageModelV4GenerateResult): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: result.warnings }];
  if (result.response) parts.push({ type: 'response-metadata', ...result.response } as LanguageModelV4StreamPart);
  result.content.forEach((c, i) => {
    if (c.type === 'text' || c.type === 'reasoning') {
      const id = String(i);
      parts.push({ type: `${c.type}-start`, id } as LanguageModelV4StreamPart, { type: `${c.type}-delta`, id, delta: c.text } as LanguageModelV4StreamPart, { type: `${c.type}-end`, id } as LanguageModelV4StreamPart);
    } else parts.push(c as LanguageModelV4StreamPart);
  });
  parts.push({ type: 'finish', finishReason: result.finishReason, usage: result.usage, ...(result.providerMetadata ? { providerMetadata: result.providerMetadata } : {}) });
  return parts;
}
