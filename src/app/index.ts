export { type AppPack, createApp, type CreateAppOptions, type MinaraApp } from './create-app';
export { createNotConfiguredModel } from './not-configured-model';
