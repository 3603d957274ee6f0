import type { ArtifactStore } from '../artifacts/types';
import { createE2bSandbox } from '../research/e2b-sandbox';
import { type CodeSandbox, createQuickJsSandbox, type QuickJsSandboxOptions } from '../research/quickjs-sandbox';
import { createRunCodeTools } from '../research/run-code';
import { createResearchReportTool } from '../research/report-tool';
import { createMethodologyLensTool } from '../research/research-tools';
import { createResearchSkills } from '../research/skills';
import type { LearningStore } from '../learning/types';
import type { ToolExecutionContext } from '../tools/types';
import { createRecommendFeaturesTool } from '../skills/recommend-features';
import type { SkillRegistry } from '../skills/registry';
import type { Storage } from '../storage/types';
import type { WebSearchProvider } from '../tools/search-providers';
import { createSessionTools } from '../tools/session-tools';
import { webSearchProviderFromEnv } from '../tools/search-providers';
import type { ToolEntry, ToolRegistry } from '../tools/types';
import type { UrlPolicyOptions } from '../tools/url-policy';
import { createWebSearchTools } from '../tools/web-search';
import type { AppPack, ResearchPackOptions } from './types';

export type { ResearchPackOptions } from './types';


/** What the research pack is built from (createApp passes its own parts). */
export interface ResearchPackDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where `todo` lists are kept. */
  readonly storage: Storage;
  /** `false` turns the whole pack off. */
  readonly options?: ResearchPackOptions | false | undefined;
  /** The URL policy of the web tools (allow and deny lists), which search results are checked against. */
  readonly urlPolicy?: UrlPolicyOptions | undefined;
  /** Where charts of `run_code` are saved; undefined when artifacts are off. */
  readonly artifacts?: ArtifactStore | undefined;
  /** The app's tenant when a call names none. @default 'default' */
  readonly userId?: string | undefined;
  /** The learning store of a call's tenant (`methodology_lens`); undefined when learning is off. */
  readonly learningFor?: ((ctx: ToolExecutionContext) => LearningStore | undefined) | undefined;
}


/**
 * The research pack: `web_search` (when a provider is configured), `run_code` (QuickJS; Python on e2b with
 * `E2B_API_KEY`), the session tools (`clarify`, `todo`, `recommend_features`), and the research skills with their
 * tools (`deep-research` → `create_research_report`, `analysis` → `methodology_lens`, `code-analysis`,
 * `memory.alerts` → the finance pack's `alert_request`). A plain {@link AppPack}: `createApp` adds it after the finance pack and the host's packs, and
 * closes it (the sandbox worker) in `app.close()`.
 */
export function createResearchPack(deps: ResearchPackDeps): AppPack {
  const { env, urlPolicy = {}, artifacts, userId = 'default' } = deps;
  if (deps.options === false) return {};
  const options = deps.options ?? {};
  const provider = options.webSearch === false ? undefined : (options.webSearch ?? webSearchProviderFromEnv(env));
  let registry: ToolRegistry | undefined;
  let skills: SkillRegistry | undefined;
  const sandboxes: CodeSandbox[] = [];
  const tools: ToolEntry[] = [
    ...createWebSearchTools({ provider, ...urlPolicy, ...(options.maxSearchesPerTurn !== undefined ? { maxSearchesPerTurn: options.maxSearchesPerTurn } : {}) }),
  ];
  if (options.sessionTools !== false) tools.push(...createSessionTools({ storage: deps.storage }), createRecommendFeaturesTool({ skills: () => skills }));
  if (options.runCode !== false) {
    const { sandbox: given, python: givenPython, ...limits } = options.runCode ?? {};
    const sandbox = given ?? createQuickJsSandbox(limits);
    const e2bKey = env.E2B_API_KEY?.trim();
    const apiUrl = env.E2B_API_URL?.trim() || (env.E2B_DOMAIN?.trim() ? `https://api.${env.E2B_DOMAIN.trim()}` : undefined);
    const python = givenPython === false ? undefined : (givenPython ?? (e2bKey ? createE2bSandbox({ apiKey: e2bKey, ...(apiUrl ? { apiUrl } : {}) }) : undefined));
    sandboxes.push(sandbox, ...(python ? [python] : []));
    tools.push(...createRunCodeTools({ sandbox, python, artifacts, registry: () => registry, defaultUserId: userId }));
  }
  const withSkills = options.skills !== false;
  if (withSkills) {
    if (artifacts) tools.push(createResearchReportTool({ artifacts, defaultUserId: userId }));
    if (deps.learningFor) tools.push(createMethodologyLensTool({ learningFor: deps.learningFor, registry: () => registry }));
  }
  return {
    tools,
    attach: (r) => {
      registry = r;
    },
    attachSkills: (s) => {
      skills = s;
      // Registered once the registries exist: each skill lists only the tools this app has, and a SKILL.md with the
      // same id (the operator's own version) wins.
      if (withSkills) s.register(createResearchSkills(new Set(s.tools.list().map((t) => t.name))).filter((k) => !s.has(k.id)));
    },
    close: async () => {
      for (const s of sandboxes) await s.close();
    },
  };
}
