/**
 * Whether a context's prompt only adds messages to the previous one's: what a provider's prefix
 * cache reuses.
 */
import type { MemoryContext } from "../../../domain/MemoryContext.js"
import { type PromptOptions, toPromptMessages } from "../ContextPrompt.js"

/**
 * Whether `next`'s prompt is `previous`'s prompt with messages appended, message for message: what
 * a provider's prefix cache needs to hit. The recalled block at the end of `previous` is not part
 * of what a cache keeps (it changes with each query, after the turns), so it is left out of the
 * comparison. Contexts with equal `prefixVersion`s of one conversation are append-only; this
 * compares the rendered prompts themselves.
 */
export const isAppendOnly = (previous: MemoryContext, next: MemoryContext, options?: PromptOptions): boolean => {
  const before = toPromptMessages(previous, options)
  if (previous.recalled.length > 0) before.pop()
  const after = toPromptMessages(next, options)
  return before.length <= after.length &&
    before.every((message, i) => JSON.stringify(message) === JSON.stringify(after[i]))
}
