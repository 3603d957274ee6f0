import type { WebSearchProvider } from '../tools/search-providers';
import { webSearchProviderFromEnv } from '../tools/search-providers';
import type { ToolEntry } from '../tools/types';
import type { UrlPolicyOptions } from '../tools/url-policy';
import { createWebSearchTools } from '../tools/web-search';
import type { AppPack } from './create-app';

/**
 * Options of the research pack `createApp` adds (`CreateAppOptions.research`): web search, the code sandbox,
 * deep research and the baseline tools. Every part can be turned off with `false`.
 */
export interface ResearchPackOptions {
  /**
   * The `web_search` provider, or `false` for none. @default `webSearchProviderFromEnv(env)`: `MINARA_WEB_SEARCH`,
   * else the first of `BRAVE_API_KEY`, `TAVILY_API_KEY`, `SEARXNG_URL`; absent when none is set
   */
  readonly webSearch?: WebSearchProvider | false | undefined;
  /** Searches per turn. @default 8 */
  readonly maxSearchesPerTurn?: number | undefined;
}

/** What the research pack is built from (createApp passes its own parts). */
export interface ResearchPackDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `false` turns the whole pack off. */
  readonly options?: ResearchPackOptions | false | undefined;
  /** The URL policy of the web tools (allow and deny lists), which search results are checked against. */
  readonly urlPolicy?: UrlPolicyOptions | undefined;
}

/**
 * The research pack: `web_search` (when a provider is configured). A plain {@link AppPack}: `createApp` adds it
 * after the finance pack and the host's packs.
 */
export function createResearchPack(deps: ResearchPackDeps): AppPack {
  const { env, urlPolicy = {} } = deps;
  if (deps.options === false) return {};
  const options = deps.options ?? {};
  const provider = options.webSearch === false ? undefined : (options.webSearch ?? webSearchProviderFromEnv(env));
  const tools: ToolEntry[] = [
    ...createWebSearchTools({ provider, ...urlPolicy, ...(options.maxSearchesPerTurn !== undefined ? { maxSearchesPerTurn: options.maxSearchesPerTurn } : {}) }),
  ];
  return { tools };
}
