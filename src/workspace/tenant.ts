import path from 'node:path';
import { MinaraError } from '../errors/minara-error';
import type { CreateWorkspaceOptions } from './options';
import { createWorkspace, type Workspace } from './workspace';
import { sha256Hex } from '../util/canonical-json';

/** The files every tenant reads from the operator's workspace and none can write: the agent's identity. */
export const OPERATOR_IDENTITY_FILES: ReadonlySet<string> = new Set(['SOUL.md', 'AGENTS.md', 'TOOLS.md', 'IDENTITY.md']);

/** Directory of a tenant's own workspace files under the operator's workspace. */
export function tenantWorkspaceDir(operatorDir: string, userId: string): string {
  // A digest, not the id: ids may hold "." / ".." / ":" and must never name a path.
  return path.join(operatorDir, 'tenants', sha256Hex(`minara-tenant:${userId}`).slice(0, 32));
}

/** Options of {@link createTenantWorkspace}. */
export interface TenantWorkspaceOptions extends Omit<CreateWorkspaceOptions, 'dir'> {
  /** The operator's workspace: the identity (SOUL, AGENTS, TOOLS, IDENTITY) every tenant reads. */
  readonly operator: Workspace;
  /** The tenant. */
  readonly userId: string;
}

/**
 * A tenant's view of a shared agent: the operator's identity files, read-only, over the tenant's own
 * USER.md, MEMORY.md, HEARTBEAT.md and daily journal in `tenants/<digest>/` under the operator's workspace.
 * Nothing a tenant's turn writes (heartbeat, journal, dreaming) lands where another tenant reads, and
 * nothing of the operator's between-session memory (USER.md, MEMORY.md, HEARTBEAT.md, journal) reaches a
 * tenant's prompt. Onboarding (BOOTSTRAP.md) is the operator's alone.
 */
export function createTenantWorkspace(options: TenantWorkspaceOptions): Workspace {
  const { operator, userId, ...rest } = options;
  const own = createWorkspace({ ...rest, dir: tenantWorkspaceDir(operator.dir, userId) });
  const refuse = (name: string): never => {
    throw new MinaraError('WORKSPACE_FILE_NOT_EDITABLE', `${name} is the operator's; a tenant cannot write it.`);
  };
  return {
    dir: own.dir,
    settings: own.settings,
    // Tenant files are created as they are written; nothing is seeded (no templates, no onboarding).
    seed: async () => ({ dir: own.dir, brandNew: false, created: [], existing: [], sweptOrphans: 0 }),
    async loadPromptBlocks(opts = {}) {
      const [shared, mine] = await Promise.all([operator.loadPromptBlocks(opts), own.loadPromptBlocks(opts)]);
      return {
        ...mine,
        identity: shared.identity,
        identityHash: shared.identityHash,
        bootstrap: undefined,
        layout: shared.layout,
        notices: [...shared.notices.filter((n) => n.kind !== 'file-unreadable' || OPERATOR_IDENTITY_FILES.has(n.file)), ...mine.notices.filter((n) => !('file' in n) || !OPERATOR_IDENTITY_FILES.has(n.file))],
        files: [...shared.files.filter((f) => f.block === 'identity'), ...mine.files.filter((f) => f.block !== 'identity' && f.block !== 'bootstrap')],
        totalChars: shared.files.filter((f) => f.block === 'identity').reduce((n, f) => n + f.chars, 0) + mine.files.filter((f) => f.block === 'dynamic').reduce((n, f) => n + f.chars, 0),
      };
    },
    readFile: (name) => (OPERATOR_IDENTITY_FILES.has(name) ? operator.readFile(name) : own.readFile(name)),
    async writeFile(name, content, writeOptions) {
      if (OPERATOR_IDENTITY_FILES.has(name)) refuse(name);
      return own.writeFile(name, content, writeOptions);
    },
    writeHeartbeat: (input) => own.writeHeartbeat(input),
    appendDailyLog: (input) => own.appendDailyLog(input),
    completeBootstrap: async () => undefined,
    onTurnEnd: (input) => own.onTurnEnd(input),
    runDreamTick: (o) => own.runDreamTick(o),
    startDreamScheduler: () => own.startDreamScheduler(),
    close: () => own.close(),
  };
}
