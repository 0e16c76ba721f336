/**
 * Whether a context's prompt only adds messages to the previous one's, as a provider's prefix
 * cache needs.
 */
import type { MemoryContext } from "../../../domain/MemoryContext.js"
import { type PromptOptions, toPromptMessages } from "../ContextPrompt.js"

/**
 * Whether `next`'s prompt is `previous`'s with messages appended, message for message. The recalled
 * block at the end of `previous` changes with each query, so it is left out of the comparison.
 * Contexts of one conversation with equal `prefixVersion`s are append-only. This compares the
 * rendered prompts themselves.
 */
export const isAppendOnly = (previous: MemoryContext, next: MemoryContext, options?: PromptOptions): boolean => {
  const before = toPromptMessages(previous, options)
  if (previous.recalled.length > 0) before.pop()
  const after = toPromptMessages(next, options)
  return before.length <= after.length &&
    before.every((message, i) => JSON.stringify(message) === JSON.stringify(after[i]))
}
