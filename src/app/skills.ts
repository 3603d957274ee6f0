import path from 'node:path';
import { createExternalSkillsManager, type ExternalSkillsManager } from '../skills/external';
import { createSkillRegistry, type SkillRegistry } from '../skills/registry';
import { loadSkillDirectories, type SkillLoadIssue } from '../skills/skill-md';
import type { ToolRegistry } from '../tools/types';
import type { AppPacks } from './packs';
import type { AppSettings } from './settings';

/** The skills of the app and what could not be loaded. */
export interface AppSkills {
  readonly skills: SkillRegistry;
  readonly skillLoadIssues: readonly SkillLoadIssue[];
  readonly externalSkills: ExternalSkillsManager;
}

/**
 * The skills part: the packs' skills, the host's, the SKILL.md directories (`${workspaceDir}/skills` by
 * default) and the external skills under `<dataDir>/skills/external`. A skill that does not load is a warning
 * and an issue on the list, never a failure.
 */
export function assembleSkills(settings: AppSettings, tools: ToolRegistry, packs: AppPacks): AppSkills {
  const { options, env, config, logger, now } = settings;
  const externalSkills = createExternalSkillsManager({ dir: path.join(config.dataDir, 'skills', 'external'), now });
  const skills = createSkillRegistry({ tools, env, logger, skills: [...packs.packs.flatMap((p) => p.skills ?? []), ...(options.skills ?? [])] });
  const fromDirs = loadSkillDirectories(options.skillDirs ?? [path.join(config.workspaceDir, 'skills')]);
  const external = externalSkills.load();
  const skillLoadIssues: SkillLoadIssue[] = [...fromDirs.issues, ...external.issues];
  for (const skill of [...fromDirs.skills, ...external.skills]) {
    try {
      skills.register(skill);
    } catch (error) {
      skillLoadIssues.push({ file: skill.origin.file ?? skill.id, field: 'id', message: error instanceof Error ? error.message : String(error), severity: 'error' });
    }
  }
  for (const issue of skillLoadIssues) logger.warn('skill not loaded', { file: issue.file, field: issue.field, message: issue.message });
  for (const p of packs.packs) p.attachSkills?.(skills);
  return { skills, skillLoadIssues, externalSkills };
}
