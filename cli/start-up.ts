/**
 * What the bin does before it loads anything else, to start faster. Only the bin calls this: the package itself
 * changes nothing in a host's module loading.
 */
import module from 'node:module';

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
