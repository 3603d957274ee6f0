/**
 * What the bin does before it loads anything else, to start faster. Only the bin calls this: the package itself
 * changes nothing in a host's module loading.
 */
import module from 'node:module';
import os from 'node:os';
import path from 'node:path';

/**
 * Turn on Node's compile cache (V8 bytecode of every module on disk: about a quarter off every later start). Node's
 * default directory, `$TMPDIR/node-compile-cache` (or `NODE_COMPILE_CACHE`), is shared by every user of the
 * machine and belongs to whoever's Node made it first; anyone else cannot write it, and Node then starts without a
 * cache, silently (~40–55 ms more CPU on every start). When that happens the bin uses the user's own cache directory:
 * `$XDG_CACHE_HOME/minara/node-compile-cache`, else `~/.cache/minara/node-compile-cache` (in the home directory, not
 * in a shared temporary one another user could fill first). `NODE_DISABLE_COMPILE_CACHE=1` still turns it off.
 * @returns the directory in use, or undefined when there is none.
 */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (typeof module.enableCompileCache !== 'function') return undefined;
  const { FAILED, ENABLED, ALREADY_ENABLED } = module.constants.compileCacheStatus;
  const first = module.enableCompileCache();
  if (first.status !== FAILED) return first.status === ENABLED || first.status === ALREADY_ENABLED ? first.directory : undefined;
  const base = env['XDG_CACHE_HOME'] || path.join(os.homedir(), '.cache');
  const own = module.enableCompileCache(path.join(base, 'minara', 'node-compile-cache'));
  return own.status === ENABLED || own.status === ALREADY_ENABLED ? own.directory : undefined;
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
