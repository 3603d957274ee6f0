/** What releases one part of the app (closes a connection, stops a timer, unsubscribes). */
export type Disposer = () => void | Promise<void>;

/**
 * The app's parts register here what releases them, as each is assembled; they are released in the reverse
 * order, last assembled first, so nothing is released while a part assembled after it still holds it.
 */
export interface DisposerStack {
  /** Register the release of a part that was just assembled. */
  push(release: Disposer): void;
  /** Release every part, last assembled first (`app.close()`); the first failure stops the release and is thrown. */
  releaseAll(): Promise<void>;
  /** Release every part assembled so far, last first, ignoring failures (`createApp` failed part-way). */
  releaseQuietly(): Promise<void>;
}

/** Create the app's disposer stack. */
export function createDisposerStack(): DisposerStack {
  const stack: Disposer[] = [];
  return {
    push(release) {
      stack.push(release);
    },
    async releaseAll() {
      for (const release of [...stack].reverse()) await release();
    },
    async releaseQuietly() {
      for (const release of [...stack].reverse()) {
        try {
          await release();
        } catch {
          // The failure that stopped createApp is the one the caller sees.
        }
      }
    },
  };
}
