export { type AppPack, createApp, type CreateAppOptions, type MinaraApp } from './create-app';
export { createNotConfiguredModel } from './not-configured-model';
export { HARD_CONSTRAINT_PREFIX, readHardConstraints } from './hard-constraints';
export { createResearchPack, type ResearchPackDeps, type ResearchPackOptions } from './research-pack';
export type { DisabledFeature } from './feature-gates';
