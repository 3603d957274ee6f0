// Runs before the app's module. The page's CSP has no 'unsafe-eval'; zod (inside `ai`) probes `new Function`
// when its first object schema is built, at import time. The probe is caught, but Chromium logs the CSP
// violation. zod reads this global config when it loads: jitless skips the probe and its compiled parsers.
globalThis.__zod_globalConfig = Object.assign(globalThis.__zod_globalConfig || {}, { jitless: true });
