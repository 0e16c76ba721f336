/**
 * The strategy that does nothing: never summarizes; the context is the whole conversation.
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import { MemoryManagementStrategy } from "../services/MemoryManagementStrategy.js"
import { RepositoryService } from "../services/RepositoryService.js"
import { SettingsStore } from "../services/SettingsStore.js"
import { assemble, emptyContext, emptyPreamble, noEvents, withCurrentSystem } from "./internal/context/window.js"

/**
 * Builds the no-op strategy. Its context has no budget: every message, in order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = Effect.gen(function*() {
  const repository = yield* RepositoryService
  const settings = yield* SettingsStore
  return MemoryManagementStrategy.of({
    name: "noop",
    postAddMessagesHook: () => Effect.void,
    buildContext: Effect.fnUntraced(
      function*(conversationId) {
        const window = yield* repository.readWindow(conversationId, {
          after: "system-prefix",
          tokenLimit: Number.MAX_SAFE_INTEGER
        })
        return yield* assemble(repository, {
          strategy: "noop",
          window: withCurrentSystem(window),
          preamble: emptyPreamble,
          budget: null
        })
      },
      (effect, conversationId) =>
        Effect.catchTag(
          effect,
          "ConversationNotFoundError",
          // A system prompt set before the first message is its context's system message.
          () =>
            Effect.map(settings.getSettings(conversationId), (own) => emptyContext(conversationId, "noop", null, own))
        )
    ),
    awaitIdle: () => Effect.void,
    forget: () => Effect.void,
    subscribe: noEvents
  })
})

/**
 * The no-op strategy as a layer.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ApproximateTokenCounter, ChatMemory, MemoryStore, NoopStrategy } from "effect-chat-memory"
 *
 * // Every message, every time: swap the strategy by its layer.
 * export const WholeHistory = ChatMemory.layer.pipe(
 *   Layer.provideMerge(NoopStrategy.layer),
 *   Layer.provideMerge(MemoryStore.layer),
 *   Layer.provideMerge(ApproximateTokenCounter.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<MemoryManagementStrategy, never, RepositoryService | SettingsStore> = Layer.effect(
  MemoryManagementStrategy,
  make
)
