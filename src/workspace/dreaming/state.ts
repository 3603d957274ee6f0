import { MinaraError } from '../../errors/index';
import { STATE_FILES } from '../files';
import { atomicWriteConfined, readConfined } from '../safe-fs';

/** `.dreamed-state.json`. */
export interface DreamedState {
  /** mtime (ms) watermark: only daily logs modified after it are fed to the next dream. */
  readonly last_processed_mtime: number;
  /** ISO time of the last tick that held the lock. */
  readonly last_run_at?: string;
  /** Outcome of that tick (`appended`, `nothing_to_promote`, …). */
  readonly last_outcome?: string;
}

/** One `.dreamed-quarantine.json` entry. */
export interface QuarantineEntry {
  readonly quarantined_at: string;
  /** The first secret-pattern class that matched the model output. */
  readonly pattern: string;
  /** Daily-log base names kept out of future selections until the operator clears the entry. */
  readonly log_filenames: readonly string[];
  /** The newest mtime among those logs. */
  readonly max_mtime: number;
}

const STATE_MAX_BYTES = 4 * 1024 * 1024;

async function readJson(root: string, rel: string): Promise<unknown> {
  const read = await readConfined(root, rel, STATE_MAX_BYTES);
  if (read === undefined || read.content.trim() === '') return undefined;
  try {
    return JSON.parse(read.content) as unknown;
  } catch (error) {
    throw new MinaraError('CONFIG_INVALID', `${rel} is not valid JSON; fix or delete it (the dream tick was skipped).`, { cause: error });
  }
}

/** Read the watermark state (a missing file means "nothing processed yet"). A mangled file throws. */
export async function readDreamedState(root: string): Promise<DreamedState> {
  const v = (await readJson(root, STATE_FILES.dreamedState)) as Partial<DreamedState> | undefined;
  if (v === undefined) return { last_processed_mtime: 0 };
  if (typeof v !== 'object' || v === null || (v.last_processed_mtime !== undefined && typeof v.last_processed_mtime !== 'number')) {
    throw new MinaraError('CONFIG_INVALID', `${STATE_FILES.dreamedState}: expected { "last_processed_mtime": number }; fix or delete it.`);
  }
  return { ...v, last_processed_mtime: v.last_processed_mtime ?? 0 };
}

/** Persist the watermark state atomically. */
export async function writeDreamedState(root: string, state: DreamedState): Promise<void> {
  await atomicWriteConfined(root, STATE_FILES.dreamedState, `${JSON.stringify(state, null, 2)}\n`);
}

/** Read the quarantine entries (a missing file means none). A mangled file throws. */
export async function readQuarantine(root: string): Promise<QuarantineEntry[]> {
  const v = await readJson(root, STATE_FILES.dreamedQuarantine);
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    throw new MinaraError('CONFIG_INVALID', `${STATE_FILES.dreamedQuarantine}: expected a JSON array of entries; fix or delete it.`);
  }
  return v.filter((e): e is QuarantineEntry => typeof e === 'object' && e !== null && Array.isArray((e as QuarantineEntry).log_filenames));
}

/** The set of quarantined daily-log base names. */
export function quarantinedNames(entries: readonly QuarantineEntry[]): Set<string> {
  return new Set(entries.flatMap((e) => e.log_filenames.map(String)));
}

/** Append one quarantine entry atomically. */
export async function appendQuarantine(root: string, entry: QuarantineEntry): Promise<void> {
  const entries = await readQuarantine(root);
  entries.push(entry);
  await atomicWriteConfined(root, STATE_FILES.dreamedQuarantine, `${JSON.stringify(entries, null, 2)}\n`);
}
