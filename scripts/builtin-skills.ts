// The skills that ship with @minara/agent, for the catalog generator (npm run docs:skills).
import { FINANCE_SKILL_DEFINITIONS } from '../src/finance/index';

export const skills = FINANCE_SKILL_DEFINITIONS;
