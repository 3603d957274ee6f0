/**
 * `@minara/agent/testing`: test doubles for hosts and for this package's own tests. Nothing here imports
 * a test runner.
 *
 * @module
 * @example
 * ```ts
 * import { createInMemoryStorage } from '@minara/agent/testing';
 *
 * const storage = createInMemoryStorage();
 * await storage.meta.set('emergency_stop', 'on');
 * ```
 */
import { assertSupportedNode } from '../util/node-version';

// Refuse a Node.js older than 22.12 as the package loads, before anything can open the native SQLite addon (it would crash).
assertSupportedNode();

// ── storage ──────────────────────────────────────────────────────────────────
export { createInMemoryStorage, type InMemoryStorage, type InMemoryStorageOptions } from '../storage/in-memory/index';

// ── models and clocks ────────────────────────────────────────────────────────
export {
  createScriptedModel,
  estimatePromptTokens,
  type ScriptedCall,
  type ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedStep,
  type ScriptEntry,
} from './scripted-model';
export { createFakeClock, type FakeClock } from './fake-clock';
export { createFakeEmbedder, type FakeEmbedder, type FakeEmbedderOptions, fakeEmbedding } from './fake-embedder';
export { recordEvents, type RecordedEvents } from './record-events';
