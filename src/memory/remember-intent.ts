/**
 * Whether the person's own words ask the agent to remember something ("remember this", "please note that …",
 * "don't forget …", "keep in mind …", "save this for later"). The runtime, not the model, decides a memory's
 * `user_explicit` source (memory.md): a `memory_write` in a turn whose user message passes this test is marked
 * `user_explicit`; every other write by the model is `agent_recorded`. Questions about what the agent remembers
 * ("do you remember …?", "what do you remember") and statements about the person's own memory ("I remember …",
 * "I can't remember") do not count.
 */
const ASK = /\b(?:remember|memori[sz]e|don[’']?t\s+forget|do\s+not\s+forget|never\s+forget|keep\s+in\s+mind|make\s+a\s+note|take\s+a\s+note|note\s+(?:that|this|down|it)|save\s+(?:this|that|it)|store\s+(?:this|that|it))\b/iu;
const NOT_AN_ASK = /\b(?:do|did|can|could|would|will)\s+you\s+(?:still\s+)?remember\b|\bwhat\s+(?:do|did)\s+you\s+remember\b|\bi\s+(?:can[’']?t\s+|cannot\s+|don[’']?t\s+|do\s+not\s+|could\s+not\s+|couldn[’']?t\s+)?remember\b|\bremember\s+when\b/iu;

/** True when the text (the person's message of this turn) asks the agent to remember something. */
export function asksToRemember(text: string): boolean {
  const t = text.normalize('NFKC');
  if (!ASK.test(t)) return false;
  // A message may both ask a question and give an instruction: it counts when an ask remains after removing the questions.
  return ASK.test(t.replace(new RegExp(NOT_AN_ASK.source, 'giu'), ' '));
}

/** Key of the per-turn flag in `ToolCallContext.state`: the person asked to remember in this turn. */
export const USER_ASKED_TO_REMEMBER = 'memory.userAskedToRemember';
