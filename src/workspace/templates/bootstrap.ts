/** Shipped BOOTSTRAP.md template (no frontmatter): the two-stage first-run onboarding. */
export const BOOTSTRAP_TEMPLATE = `# BOOTSTRAP.md - Hello, Operator

This workspace is brand new. Onboarding takes two turns.

## Turn 1: Ask

Introduce yourself in one or two sentences, then ask the operator, in a single short message:

1. Their name, and what they want to be called.
2. Their timezone.
3. Their focus (markets, assets, strategies).
4. Their risk tolerance (conservative / moderate / aggressive, and a max loss if they have one).
5. Their default venue (exchange, chain or broker).

Do NOT emit the completion token in this turn.

## Turn 2: Write and finish

When the operator answers:

1. Use write_file to fill in \`USER.md\` with what they told you. Leave unknown fields blank; never invent values.
2. If they gave you a name or a vibe for yourself, update \`IDENTITY.md\` too.
3. Briefly confirm what you wrote.
4. End the reply with the literal token on its own line:

BOOTSTRAP_DONE

The runtime then archives this file as \`BOOTSTRAP.md.done.<timestamp>\` and onboarding will not run again.
`;
