import path from 'node:path';
import { createArtifactStore } from '../artifacts/artifact-store';
import { createArtifactMaterializer, type ArtifactMaterializer } from '../artifacts/materializer';
import type { ArtifactStore } from '../artifacts/types';
import { createFileStore } from '../files/file-store';
import type { FileStore } from '../files/types';
import type { Storage } from '../storage/types';
import type { DisposerStack } from './disposers';
import type { AppSettings } from './settings';

/** Artifacts and uploads. */
export interface AppArtifacts {
  /** The artifact store; undefined when `artifacts: false`. */
  readonly artifacts: ArtifactStore | undefined;
  /** Writes `<dataDir>/artifacts/<id>/` for the URIs in each final message; undefined when `artifacts: false`. */
  readonly materializer: ArtifactMaterializer | undefined;
  /** The file store of uploads (`<dataDir>/files`); undefined when `files: false`. */
  readonly files: FileStore | undefined;
}

/**
 * The artifacts and files part: artifact rows in storage with browsable files under `<dataDir>/artifacts`
 * (never inside the sandbox), and the upload store under `<dataDir>/files`. The materializer (and the
 * browser it may have started) is closed on release.
 */
export function assembleArtifactsAndFiles(settings: AppSettings, storage: Storage, disposers: DisposerStack): AppArtifacts {
  const { options, env, config, logger, now } = settings;
  const artifactOptions = options.artifacts === false ? undefined : (options.artifacts ?? {});
  const artifacts = artifactOptions ? createArtifactStore({ ...artifactOptions, storage, logger, now }) : undefined;
  const materializer = artifacts && artifactOptions
    ? createArtifactMaterializer({
        store: artifacts, dir: path.join(config.dataDir, 'artifacts'), logger,
        png: artifactOptions.png ?? (/^(0|false|off|no)$/i.test(env.MINARA_CHART_PNG ?? '') ? false : 'auto'),
        ...(artifactOptions.chromiumPath ?? env.MINARA_CHROMIUM_PATH ? { chromiumPath: artifactOptions.chromiumPath ?? env.MINARA_CHROMIUM_PATH } : {}),
      })
    : undefined;
  if (materializer) disposers.push(() => materializer.close());
  const files = options.files === false ? undefined : createFileStore({ dir: path.join(config.dataDir, 'files'), storage, logger, now, ...(options.files?.maxBytes !== undefined ? { maxBytes: options.files.maxBytes } : {}) });
  return { artifacts, materializer, files };
}
