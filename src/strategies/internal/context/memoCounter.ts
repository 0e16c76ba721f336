/**
 * A token counter that remembers the counts of texts a strategy shows on every read: the rendered
 * summary and facts. They change only when a summary is saved.
 */
import { Cache, Duration, Effect } from "effect"
import type { TokenCounter } from "../../../services/TokenCounter.js"

/** `counter`, with `countMessage` of messages without metadata cached by content, up to `capacity` texts. */
export const memoCounter = (counter: TokenCounter.Service, capacity = 256) =>
  Effect.map(
    Cache.make({
      capacity,
      timeToLive: Duration.infinity,
      lookup: (content: string) => counter.countMessage({ content })
    }),
    (cache): TokenCounter.Service => ({
      ...counter,
      countMessage: (message) =>
        message.metadata === undefined ? cache.get(message.content) : counter.countMessage(message)
    })
  )
