/**
 * Counts the contexts that changed the prompt's prefix (`MemoryContext.prefixVersion`), for the
 * service's `stats` and metric. Only the most recently read conversations are tracked.
 */
import { Effect } from "effect"
import type { ConversationId } from "../../domain/ConversationId.js"

/** How many conversations a service tracks. The least recently read are dropped first. */
const trackedConversations = 10_000

/** The contexts built for a conversation, and how many changed the prompt's prefix. */
export interface PrefixTrack {
  readonly version: string
  readonly contexts: number
  readonly changes: number
}

/**
 * Prefix tracking for the most recently read conversations. The `Map` stays in recency order by
 * re-inserting on each update, and is bounded by `trackedConversations`.
 */
export const makePrefixTracker = () => {
  const tracks = new Map<ConversationId, PrefixTrack>()
  return {
    record: (conversationId: ConversationId, version: string) =>
      Effect.sync(() => {
        const before = tracks.get(conversationId)
        tracks.delete(conversationId)
        const changed = before === undefined || before.version !== version
        tracks.set(conversationId, {
          version,
          contexts: (before?.contexts ?? 0) + 1,
          changes: (before?.changes ?? 0) + (changed ? 1 : 0)
        })
        if (tracks.size > trackedConversations) {
          const oldest = tracks.keys().next()
          if (oldest.done !== true) tracks.delete(oldest.value)
        }
        return changed
      }),
    get: (conversationId: ConversationId) => Effect.sync(() => tracks.get(conversationId)),
    forget: (conversationId: ConversationId) => Effect.sync(() => tracks.delete(conversationId))
  }
}
