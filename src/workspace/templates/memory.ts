/** Shipped MEMORY.md template (no frontmatter). */
export const MEMORY_TEMPLATE = `# MEMORY.md - Long-Term Memory

Curated by the operator. Durable facts, preferences and decisions only: no secrets, keys or seed phrases.
The dreaming task may append "## Dreamed YYYY-MM-DD" sections at the end; edit or delete them freely.

## Facts

## Preferences

## Decisions
`;
