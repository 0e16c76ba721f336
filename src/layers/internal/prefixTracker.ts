/**
 * Which contexts of a conversation changed the prompt's prefix (`MemoryContext.prefixVersion`), for
 * the service's `stats` and its metric, over the conversations read most recently.
 */
import { Effect } from "effect"
import type { ConversationId } from "../../domain/ConversationId.js"

/** How many conversations' prefix tracking a service keeps: the least recently read go first. */
const trackedConversations = 10_000

/** The contexts built for a conversation, and how many changed the prompt's prefix. */
export interface PrefixTrack {
  readonly version: string
  readonly contexts: number
  readonly changes: number
}

/**
 * The prefix tracking of the conversations read most recently: a `Map` kept in recency order
 * (read and re-inserted on each update), bounded by `trackedConversations`.
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
