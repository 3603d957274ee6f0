import { workspaceConfigFromEnv } from '../workspace/config';
import { createTenantWorkspace } from '../workspace/tenant';
import { createWorkspace, type Workspace } from '../workspace/workspace';
import type { DisposerStack } from './disposers';
import type { AppModels } from './models';
import type { AppSettings } from './settings';

/** The operator's workspace and the tenants'. */
export interface AppWorkspace {
  /** The operator's workspace (the app's `userId`); undefined when `workspace: false`. */
  readonly workspace: Workspace | undefined;
  /** The workspace a tenant's turns use. */
  readonly workspaceFor: (userId: string) => Workspace | undefined;
}

/**
 * The workspace part: the given workspace, or one seeded at `workspaceDir` (dreaming with the utility model,
 * else the main one, when a model is configured). The operator (the app's user) owns it; every other tenant
 * gets a tenant workspace over it: the operator's identity files, read-only, and the tenant's own USER.md,
 * MEMORY.md, heartbeat and journal. All of them are closed on release.
 */
export async function assembleWorkspace(settings: AppSettings, models: AppModels, disposers: DisposerStack): Promise<AppWorkspace> {
  const { options, env, config, logger, now, userId } = settings;
  const { model, modelStatus } = models;
  let workspace: Workspace | undefined;
  if (options.workspace === false) workspace = undefined;
  else if (options.workspace) workspace = options.workspace;
  else {
    workspace = createWorkspace({ ...workspaceConfigFromEnv(env), dir: config.workspaceDir, logger, now, ...(modelStatus.configured ? { dreaming: { ...workspaceConfigFromEnv(env).dreaming, model: options.utilityModel ?? model } } : { dreaming: { ...workspaceConfigFromEnv(env).dreaming, enabled: false } }) });
    await workspace.seed();
  }
  const tenantWorkspaces = new Map<string, Workspace>();
  const operatorWorkspace = workspace;
  const workspaceFor = (tenant: string): Workspace | undefined => {
    if (!operatorWorkspace || tenant === userId) return operatorWorkspace;
    let w = tenantWorkspaces.get(tenant);
    if (!w) {
      w = createTenantWorkspace({ ...workspaceConfigFromEnv(env), operator: operatorWorkspace, userId: tenant, logger, now, heartbeat: operatorWorkspace.settings.heartbeat, dailyLog: operatorWorkspace.settings.dailyLog });
      tenantWorkspaces.set(tenant, w);
    }
    return w;
  };
  disposers.push(() => {
    workspace?.close();
    for (const w of tenantWorkspaces.values()) w.close();
  });
  return { workspace, workspaceFor };
}
