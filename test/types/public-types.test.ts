/**
 * Types that public signatures reference are exported from the entry that uses them (typedoc's
 * `notExported` validation fails the docs build otherwise); each is checked here through the entry.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type {
  AnalyzedText,
  ConsolidationEventInput,
  ConsolidationVerdict,
  DoctorReport,
  EnvVars,
  InjectionPattern,
  LoosePath,
  MemoryEdgeRecord,
  MemoryEntityCount,
  MemoryListQuery,
  MemoryLookupFilter,
  MemoryRowPatch,
  MemoryScoredId,
  MemoryStorage,
  MemoryVectorInfo,
  MemoryVectorInput,
  NewMemoryRow,
  PromptBuildSettings,
  WorkspaceSettings,
} from '@minara/agent';
import { classifyMessage, endpointWarnings, INJECTION_PATTERNS } from '@minara/agent';
import type { OrderFacts, TokenRef } from '@minara/agent/finance';

describe('referenced public types are exported', () => {
  it('from the root and /finance, matching the signatures that use them', () => {
    expectTypeOf(INJECTION_PATTERNS).toEqualTypeOf<readonly InjectionPattern[]>();
    expectTypeOf(endpointWarnings).parameter(0).toEqualTypeOf<EnvVars | undefined>();
    expectTypeOf<Parameters<typeof classifyMessage>[0]>().toEqualTypeOf<string | AnalyzedText>();
    expectTypeOf<WorkspaceSettings['prompt']>().toEqualTypeOf<PromptBuildSettings>();
    expectTypeOf<NonNullable<DoctorReport['permissions']>['loose']>().toEqualTypeOf<readonly LoosePath[]>();
    expectTypeOf<OrderFacts['tokens']>().toEqualTypeOf<readonly TokenRef[]>();
    expectTypeOf<ConsolidationVerdict['verdict']>().toEqualTypeOf<'supersedes' | 'duplicate' | 'compatible'>();
    expectTypeOf<Parameters<MemoryStorage['insert']>[1]>().toEqualTypeOf<NewMemoryRow>();
    expectTypeOf<Parameters<MemoryStorage['update']>>().toMatchTypeOf<[unknown, number, MemoryRowPatch, ...unknown[]]>();
    expectTypeOf<Parameters<MemoryStorage['list']>>().toMatchTypeOf<[unknown, MemoryListQuery, ...unknown[]]>();
    expectTypeOf<Parameters<MemoryStorage['upsertVectors']>>().toMatchTypeOf<[unknown, readonly MemoryVectorInput[], ...unknown[]]>();
    expectTypeOf<Parameters<MemoryStorage['appendConsolidationEvent']>>().toMatchTypeOf<[unknown, ConsolidationEventInput, ...unknown[]]>();
    expectTypeOf<Awaited<ReturnType<MemoryStorage['edgesForEntity']>>>().toEqualTypeOf<MemoryEdgeRecord[]>();
    expectTypeOf<Awaited<ReturnType<MemoryStorage['topEntities']>>>().toEqualTypeOf<MemoryEntityCount[]>();
    expectTypeOf<Awaited<ReturnType<MemoryStorage['vectorInfo']>>>().toEqualTypeOf<MemoryVectorInfo>();
    expectTypeOf<Awaited<ReturnType<MemoryStorage['searchLike']>>>().toEqualTypeOf<MemoryScoredId[]>();
    expectTypeOf<Parameters<MemoryStorage['searchLike']>[2]>().toEqualTypeOf<MemoryLookupFilter>();
  });
});
