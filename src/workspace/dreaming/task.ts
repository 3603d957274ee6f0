import { join } from 'node:path';
import { realpath } from 'node:fs/promises';
import type { LanguageModel } from 'ai';
import { loadAi } from '../../util/lazy-ai';
import { findPersonalData } from '../../safety/personal-data';
import { looksLikeInstruction } from '../../safety/instruction-classifier';
import type { Logger } from '../../util/logger';
import { type LockRecord, tryAcquireFileLock } from '../file-lock';
import type { DailyLogEntry } from '../file-cache';
import { STATE_FILES } from '../files';
import { readConfined, readTailConfined, atomicWriteConfined } from '../safe-fs';
import { withWriteLock } from '../write-lock';
import { appendSection, buildCuratorPrompt, CURATOR_INSTRUCTIONS, isNothingToPromote, renderDreamedSection } from './prompt';
import { selectDreamLogs } from './selection';
import { appendQuarantine, type DreamedState, quarantinedNames, readDreamedState, readQuarantine, writeDreamedState } from './state';

/** Log `module` of every dreaming line. */
export const DREAMING_LOG_MODULE = 'workspace/dreaming-task';

/** How a dream tick ended (also the `event` of its log line). */
export type DreamOutcome = 'appended' | 'nothing_to_promote' | 'pii_detected_quarantine' | 'lock_held_skip' | 'llm_error' | 'no_new_logs';

/** The result of {@link runDreamTick}. */
export interface DreamTickResult {
  readonly outcome: DreamOutcome;
  /** Workspace-relative paths of the daily logs fed to the model (oldest first). */
  readonly logs: readonly string[];
  /** The appended `## Dreamed` section (outcome `appended`). */
  readonly section?: string;
  /** The matched secret-pattern class (outcome `pii_detected_quarantine`). */
  readonly pattern?: string;
  /** The live lock holder (outcome `lock_held_skip`). */
  readonly holder?: LockRecord;
  /** The model error message (outcome `llm_error`). */
  readonly error?: string;
  /** The watermark after the tick (absent when the lock was held elsewhere). */
  readonly watermark?: number;
}

/** Settings of the dreaming task. */
export interface DreamSettings {
  /** @default 262144 (256 KB) */
  readonly totalInputBytes: number;
  /** Per-log tail cap, also applied to MEMORY.md. @default 65536 (64 KB) */
  readonly maxFileBytes: number;
  /** @default 1800000 (30 minutes) */
  readonly lockTtlMs: number;
  /** Only logs dated within this many days are considered. @default 7 */
  readonly windowDays: number;
  /** Abort the model call after this long. @default 90% of `lockTtlMs` */
  readonly timeoutMs: number;
}

/** Everything {@link runDreamTick} needs. */
export interface DreamDeps {
  readonly root: string;
  readonly model: LanguageModel;
  readonly now: () => Date;
  readonly logger: Logger;
  readonly settings: DreamSettings;
  readonly listDailyLogs: () => Promise<readonly DailyLogEntry[]>;
  readonly maxReadBytes: number;
  readonly signal?: AbortSignal | undefined;
  /** Lock-staleness seams for tests. */
  readonly hostname?: string;
  readonly isPidAlive?: (pid: number) => boolean;
}

/**
 * One pass of the dreaming pipeline: lock → state → select → MEMORY.md tail → curator call →
 * NOTHING_TO_PROMOTE (exact) → PII gate → append `## Dreamed YYYY-MM-DD` → advance watermark. The lock
 * is released on every exit path; model failures come back as `llm_error`, other failures are rethrown.
 */
export async function runDreamTick(deps: DreamDeps): Promise<DreamTickResult> {
  const { root, logger, now, settings } = deps;
  const log = (level: 'info' | 'warn' | 'error', event: string, fields: Record<string, unknown> = {}) =>
    logger[level](event, { module: DREAMING_LOG_MODULE, event, workspace: root, ...fields });

  const lockPath = join(await realpath(root), STATE_FILES.dreamingLock);
  const attempt = await tryAcquireFileLock(lockPath, {
    ttlMs: settings.lockTtlMs,
    now,
    logger,
    module: DREAMING_LOG_MODULE,
    ...(deps.hostname !== undefined ? { hostname: deps.hostname } : {}),
    ...(deps.isPidAlive !== undefined ? { isPidAlive: deps.isPidAlive } : {}),
  });
  if (!attempt.acquired) {
    log('info', 'lock_held_skip', { holder: attempt.holder });
    return { outcome: 'lock_held_skip', logs: [], ...(attempt.holder ? { holder: attempt.holder } : {}) };
  }
  try {
    const state = await readDreamedState(root);
    const quarantine = await readQuarantine(root);
    const finish = async (outcome: DreamOutcome, watermark: number) => {
      const next: DreamedState = { last_processed_mtime: watermark, last_run_at: now().toISOString(), last_outcome: outcome };
      await writeDreamedState(root, next);
    };
    const logs = await selectDreamLogs(root, await deps.listDailyLogs(), {
      watermark: state.last_processed_mtime,
      quarantined: quarantinedNames(quarantine),
      windowDays: settings.windowDays,
      now: now(),
      totalInputBytes: settings.totalInputBytes,
      maxFileBytes: settings.maxFileBytes,
    });
    const rels = logs.map((l) => l.rel);
    if (logs.length === 0) {
      await finish('no_new_logs', state.last_processed_mtime);
      log('info', 'no_new_logs', { watermark: state.last_processed_mtime });
      return { outcome: 'no_new_logs', logs: [], watermark: state.last_processed_mtime };
    }
    const maxMtime = Math.max(...logs.map((l) => l.mtimeMs));
    const memory = await readTailConfined(root, 'MEMORY.md', settings.maxFileBytes);
    const memoryTail = memory === undefined ? '' : `${memory.truncated ? '[...truncated head]\n' : ''}${memory.content}`;

    let response: string;
    try {
      const signals = [AbortSignal.timeout(settings.timeoutMs), ...(deps.signal ? [deps.signal] : [])];
      const { generateText } = await loadAi();
      const result = await generateText({
        model: deps.model,
        instructions: CURATOR_INSTRUCTIONS,
        prompt: buildCuratorPrompt(memoryTail, logs),
        abortSignal: AbortSignal.any(signals),
      });
      response = result.text;
      if (response.trim() === '') throw new Error('the model returned an empty response');
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await finish('llm_error', state.last_processed_mtime);
      log('error', 'llm_error', { error: message, logs: rels });
      return { outcome: 'llm_error', logs: rels, error: message, watermark: state.last_processed_mtime };
    }

    if (isNothingToPromote(response)) {
      await finish('nothing_to_promote', maxMtime);
      log('info', 'nothing_to_promote', { logs: rels, watermark: maxMtime });
      return { outcome: 'nothing_to_promote', logs: rels, watermark: maxMtime };
    }

    // Lines that read as instructions to the agent about its rails never reach MEMORY.md (every future prompt).
    const lines = response.split('\n');
    const kept = lines.filter((line) => !looksLikeInstruction(line));
    if (kept.length < lines.length) {
      log('warn', 'instructions_dropped', { dropped: lines.length - kept.length, logs: rels });
      response = kept.join('\n');
      if (isNothingToPromote(response) || response.trim() === '') {
        await finish('nothing_to_promote', maxMtime);
        return { outcome: 'nothing_to_promote', logs: rels, watermark: maxMtime };
      }
    }

    const hits = findPersonalData(response);
    if (hits.length > 0) {
      const patterns = [...new Set(hits.map((h) => h.pattern))];
      const pattern = patterns[0] ?? 'unknown';
      const fileNames = logs.map((l) => l.fileName);
      await appendQuarantine(root, { quarantined_at: now().toISOString(), pattern, log_filenames: fileNames, max_mtime: maxMtime });
      await finish('pii_detected_quarantine', state.last_processed_mtime);
      log('error', 'pii_detected_quarantine', { pattern, patterns, log_filenames: fileNames });
      return { outcome: 'pii_detected_quarantine', logs: rels, pattern, watermark: state.last_processed_mtime };
    }

    const section = renderDreamedSection(response, now());
    await withWriteLock(root, logger, async () => {
      const existing = await readConfined(root, 'MEMORY.md', deps.maxReadBytes);
      await atomicWriteConfined(root, 'MEMORY.md', appendSection(existing?.content, section));
    });
    await finish('appended', maxMtime);
    log('info', 'appended', { logs: rels, watermark: maxMtime, chars: section.length });
    return { outcome: 'appended', logs: rels, section, watermark: maxMtime };
  } finally {
    await attempt.lock.release();
  }
}
