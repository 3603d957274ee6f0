/**
 * What the bin does before it loads anything else, to start faster. Only the bin calls this: the package itself
 * changes nothing in a host's module loading.
 */
import fs from 'node:fs';
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';

/**
 * Turn on Node's compile cache (V8 bytecode of every module on disk: about a quarter off every later start) in the
 * user's own directory: `$XDG_CACHE_HOME/minara/node-compile-cache`, else `~/.cache/minara/node-compile-cache`, made
 * mode 0700 (when neither can be used, `$TMPDIR/minara-<uid>/node-compile-cache` under the same rule). Not Node's
 * default, `$TMPDIR/node-compile-cache`: that one is shared by every user of the machine and belongs to whoever's
 * Node made it first. When someone else made it (or made it writable by others), Node still
 * uses it, so they can replace the cache files this user's starts load, and V8 runs a code cache as it finds it;
 * when they made it 0755, this user's starts run without a cache, silently (~40–55 ms more CPU each).
 *
 * The directory is used only when it and every directory above it are owned by this user or root, and none can be
 * written by anyone else (a sticky directory owned by root, such as `/tmp`, may be: nobody can rename what it
 * holds); else the bin starts without a cache. `NODE_COMPILE_CACHE` (Node turns the cache on itself, before the bin
 * runs, in the directory it names) and `NODE_DISABLE_COMPILE_CACHE=1` still decide when set.
 * @returns the directory in use, or undefined when there is none.
 */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (typeof module.enableCompileCache !== 'function') return undefined;
  // On already: NODE_COMPILE_CACHE, or a host that turned it on.
  const current = module.getCompileCacheDir?.();
  if (current !== undefined) return current;
  if (env['NODE_DISABLE_COMPILE_CACHE'] !== undefined && env['NODE_DISABLE_COMPILE_CACHE'] !== '') return undefined;
  const dir = privateCacheDirectory(path.join(env['XDG_CACHE_HOME'] || path.join(os.homedir(), '.cache'), 'minara', 'node-compile-cache')) ??
    privateCacheDirectory(path.join(os.tmpdir(), `minara-${process.getuid?.() ?? 'user'}`, 'node-compile-cache'));
  if (dir === undefined) return undefined;
  const { ENABLED, ALREADY_ENABLED } = module.constants.compileCacheStatus;
  const own = module.enableCompileCache(dir);
  return own.status === ENABLED || own.status === ALREADY_ENABLED ? own.directory : undefined;
}

/**
 * The real path of `dir` (made 0700 if missing) when {@link isPrivateDirectory} holds for it, else undefined. Node
 * gets the real path: a link on the way, even one in a sticky directory, cannot be swapped after the check.
 */
function privateCacheDirectory(dir: string): string | undefined {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const real = fs.realpathSync.native(dir);
    return isPrivateDirectory(real) ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Is `dir` (a real path) this user's alone: it and each directory above it owned by this user or root, `dir` writable
 * by its owner only, and each one above writable by nobody else unless it is a sticky directory owned by root? (The
 * rule OpenSSH applies to `~/.ssh`.) Where there are no POSIX owners (Windows), the profile directory is the user's.
 */
export function isPrivateDirectory(dir: string): boolean {
  const uid = process.getuid?.();
  if (uid === undefined) return true;
  const leaf = fs.statSync(dir);
  if (!leaf.isDirectory() || leaf.uid !== uid || (leaf.mode & 0o022) !== 0) return false;
  for (let p = path.dirname(dir); ; p = path.dirname(p)) {
    const st = fs.statSync(p);
    if (st.uid !== uid && st.uid !== 0) return false;
    if ((st.mode & 0o022) !== 0 && !((st.mode & 0o1000) !== 0 && st.uid === 0)) return false;
    if (path.dirname(p) === p) return true;
  }
}

/** zod's modules that re-export its translations as the `locales` namespace (`z.locales`, `core.locales`). */
const ZOD_LOCALES_IMPORTER = /\/zod\/v4\/(?:classic|core|mini)\/[^/]+\.js$/u;

/**
 * zod's root module re-exports all of its 58 translations of error messages as `z.locales`: 58 more modules to
 * resolve, read and link on every start (~20 ms of CPU, a tenth of the REPL's). zod sets English itself, from
 * `locales/en.js`, and nothing the CLI runs reads `z.locales` or switches zod's language. So in this process
 * `z.locales` holds English alone: a resolve hook hands zod a one-line module in place of its locales index.
 * Node before 22.15 has no `module.registerHooks`: there the start is only slower.
 */
export function loadOnlyEnglishZodLocale(): void {
  const registerHooks = (module as { registerHooks?: typeof module.registerHooks }).registerHooks;
  if (typeof registerHooks !== 'function') return;
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      if (specifier !== '../locales/index.js' || !ZOD_LOCALES_IMPORTER.test(context.parentURL ?? '')) return resolved;
      const english = new URL('en.js', resolved.url).href;
      return { url: `data:text/javascript,export { default as en } from ${encodeURIComponent(JSON.stringify(english))};`, format: 'module', shortCircuit: true };
    },
  });
}
