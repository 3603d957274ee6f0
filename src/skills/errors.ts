import { MinaraError } from '../errors/minara-error';

/** One or more skill ids are unknown (or hidden by gating); `suggestions` maps each to close matches. */
export class SkillNotFoundError extends MinaraError {
  readonly skillIds: readonly string[];
  readonly suggestions: Readonly<Record<string, readonly string[]>>;
  constructor(skillIds: readonly string[], suggestions: Readonly<Record<string, readonly string[]>>, details: readonly string[]) {
    super('SKILL_NOT_FOUND', `${details.join(' ')} Nothing was activated; the loaded set is unchanged.`);
    this.name = 'SkillNotFoundError';
    this.skillIds = skillIds;
    this.suggestions = suggestions;
  }
}

/** A skill may not be activated from this source (sandbox-class skill from an autonomous source). */
export class SkillActivationRefusedError extends MinaraError {
  readonly skillIds: readonly string[];
  constructor(skillIds: readonly string[], message: string) {
    super('SKILL_ACTIVATION_REFUSED', message);
    this.name = 'SkillActivationRefusedError';
    this.skillIds = skillIds;
  }
}
