import { MinaraError } from '../../errors/minara-error';
import { StorageError } from '../../errors/subclasses';
import type { Storage } from '../types';
import { createInMemoryApprovalStorage } from './approvals';
import { createInMemoryAuditStorage } from './audit';
import { createInMemoryConversationStorage } from './conversations';
import { createInMemoryGrantStorage } from './grants';
import { guardClosed } from './guard';
import { createInMemoryMemoryStorage } from './memory';
import { createInMemoryMetaStorage } from './meta';
import { createInMemoryJobStorage } from './jobs';
import { createInMemoryUsageStorage } from './usage';
import { createInMemoryTradingStorage } from './trading';
import { createInMemoryLearningStorage } from './learning';
import { createInMemoryArtifactStorage, createInMemoryFileStorage } from './artifacts';
import { createInMemoryControlStorage } from './controls';
import { createInMemoryAlertStorage, createInMemoryWorkflowRunStorage } from './automation';

/** Options of {@link createInMemoryStorage}. */
export interface InMemoryStorageOptions {
  /**
   * The clock for timestamps storage sets itself (instance creation, `updatedAt` on append).
   * @default () => new Date()
   */
  readonly now?: (() => Date) | undefined;
  /**
   * The instance key (32 bytes) instead of a random one. Two stores with one key are one instance: a signed
   * memory export of one verifies in the other (tests of restores).
   */
  readonly instanceKey?: Uint8Array | undefined;
}

/** The in-memory {@link Storage}. */
export interface InMemoryStorage extends Storage {
  /** Always `'memory'`. */
  readonly kind: 'memory';
}

/**
 * A {@link Storage} that lives in this process's memory, for tests and throwaway runs. Same semantics as
 * the SQLite engine (compare-and-set transitions, contiguous `seq`, newest-first listings, filters, one
 * instance key); every read returns a copy, so callers cannot change stored state by mutating a result.
 * Nothing survives `close()` or the process.
 *
 * @example
 * ```ts
 * import { createInMemoryStorage } from '@minara/agent/testing';
 *
 * const storage = createInMemoryStorage({ now: () => new Date('2026-01-01T00:00:00Z') });
 * await storage.conversations.ensureSession({ id: 's1', now: '2026-01-01T00:00:00.000Z' });
 * const [stored] = await storage.conversations.appendMessages('s1', [
 *   { role: 'user', json: '{"role":"user","content":"hi"}', createdAt: '2026-01-01T00:00:00.000Z' },
 * ]);
 * console.log(stored?.seq); // 1
 * ```
 */
export function createInMemoryStorage(options: InMemoryStorageOptions = {}): InMemoryStorage {
  const { now = () => new Date(), instanceKey } = options;
  if (instanceKey !== undefined && (!(instanceKey instanceof Uint8Array) || instanceKey.length !== 32)) {
    throw new MinaraError('CONFIG_INVALID', `createInMemoryStorage: instanceKey must be 32 bytes, got ${instanceKey instanceof Uint8Array ? instanceKey.length : typeof instanceKey}`);
  }
  let closed = false;
  const isClosed = () => closed;

  return {
    kind: 'memory',
    capabilities: Object.freeze({ fullText: true, vector: true, multiProcess: false }),
    meta: guardClosed('meta', createInMemoryMetaStorage(now, instanceKey), isClosed),
    audit: guardClosed('audit', createInMemoryAuditStorage(), isClosed),
    approvals: guardClosed('approvals', createInMemoryApprovalStorage(), isClosed),
    grants: guardClosed('grants', createInMemoryGrantStorage(), isClosed),
    conversations: guardClosed('conversations', createInMemoryConversationStorage(now), isClosed),
    memory: guardClosed('memory', createInMemoryMemoryStorage({ now }), isClosed),
    trading: guardClosed('trading', createInMemoryTradingStorage({ now }), isClosed),
    jobs: guardClosed('jobs', createInMemoryJobStorage(), isClosed),
    usage: guardClosed('usage', createInMemoryUsageStorage(), isClosed),
    learning: guardClosed('learning', createInMemoryLearningStorage(), isClosed),
    artifacts: guardClosed('artifacts', createInMemoryArtifactStorage(), isClosed),
    files: guardClosed('files', createInMemoryFileStorage(), isClosed),
    controls: guardClosed('controls', createInMemoryControlStorage(), isClosed),
    workflows: guardClosed('workflows', createInMemoryWorkflowRunStorage(), isClosed),
    alerts: guardClosed('alerts', createInMemoryAlertStorage(), isClosed),
    async schemaVersions() {
      if (closed) throw new StorageError('schemaVersions', 'storage is closed');
      return {};
    },
    async close() {
      closed = true;
    },
  };
}
