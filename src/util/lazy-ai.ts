/**
 * The `ai` package, loaded with the first model call rather than with the SDK: importing it (and the gateway
 * provider it brings) cost ~20–30 ms of every cold start, and a REPL prompt, `minara --help` or a gateway's
 * `/healthz` make no model call. Everything that calls a model is async already; it awaits this first.
 */
let loaded: Promise<typeof import('ai')> | undefined;

/** The `ai` module (one import, shared). */
export function loadAi(): Promise<typeof import('ai')> {
  loaded ??= import('ai');
  return loaded;
}
