/**
 * The in-memory store's summarization lease (`SummarizationLease`): the leases held, in a `Ref`.
 * One process owns the store, so that excludes every other holder.
 */
import { Effect, HashSet, Ref } from "effect"
import type { ConversationId } from "../../../../domain/ConversationId.js"
import { SummarizationLease } from "../../../../services/SummarizationLease.js"

/** A lease with no holder. */
export const make: Effect.Effect<SummarizationLease.Service> = Effect.map(
  Ref.make(HashSet.empty<ConversationId>()),
  (held) =>
    SummarizationLease.of({
      withLease: (conversationId, effect) =>
        Effect.acquireUseRelease(
          Ref.modify(held, (holders) =>
            HashSet.has(holders, conversationId)
              ? [false, holders]
              : [true, HashSet.add(holders, conversationId)]),
          (acquired) => (acquired ? Effect.asSome(effect) : Effect.succeedNone),
          (acquired) => (acquired ? Ref.update(held, HashSet.remove(conversationId)) : Effect.void)
        ).pipe(Effect.withSpan("MemoryStore.withLease", { attributes: { conversationId } }))
    })
)
