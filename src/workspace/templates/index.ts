import type { WorkspaceFileName } from '../files';
import { AGENTS_TEMPLATE } from './agents';
import { BOOTSTRAP_TEMPLATE } from './bootstrap';
import { HEARTBEAT_TEMPLATE } from './heartbeat';
import { IDENTITY_TEMPLATE } from './identity';
import { MEMORY_TEMPLATE } from './memory';
import { SOUL_TEMPLATE } from './soul';
import { TOOLS_TEMPLATE } from './tools';
import { USER_TEMPLATE } from './user';

/**
 * The templates shipped in the package, one per workspace file, embedded as strings so every bundle
 * carries them. HEARTBEAT.md is a restore/schema reference only and is never seeded.
 */
export const WORKSPACE_TEMPLATES: Readonly<Record<WorkspaceFileName, string>> = {
  'AGENTS.md': AGENTS_TEMPLATE,
  'SOUL.md': SOUL_TEMPLATE,
  'TOOLS.md': TOOLS_TEMPLATE,
  'IDENTITY.md': IDENTITY_TEMPLATE,
  'USER.md': USER_TEMPLATE,
  'HEARTBEAT.md': HEARTBEAT_TEMPLATE,
  'BOOTSTRAP.md': BOOTSTRAP_TEMPLATE,
  'MEMORY.md': MEMORY_TEMPLATE,
};
