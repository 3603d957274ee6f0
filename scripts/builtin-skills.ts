// The skills that ship with @minara/agent, for the catalog generator (npm run docs:skills).
import { FINANCE_SKILL_DEFINITIONS } from '../src/finance/index';
import { RESEARCH_SKILL_DEFINITIONS } from '../src/research/index';

export const skills = [...FINANCE_SKILL_DEFINITIONS, ...RESEARCH_SKILL_DEFINITIONS];
