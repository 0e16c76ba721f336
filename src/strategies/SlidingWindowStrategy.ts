/**
 * The sliding-window strategy: the leading system messages and the newest turns that fit the
 * token budget. Nothing is summarized; older turns are left out and reported as omitted.
 *
 * @since 0.1.0
 */
import { Effect, Layer, Schema } from "effect"
import * as ContextSettings from "../domain/ContextSettings.js"
import type { DataValidationError } from "../errors/DataValidationError.js"
import { decode } from "../errors/internal/decode.js"
import { MemoryManagementStrategy } from "../services/MemoryManagementStrategy.js"
import { RepositoryService } from "../services/RepositoryService.js"
import { SettingsStore } from "../services/SettingsStore.js"
import { assemble, emptyContext, emptyPreamble, noEvents, withCurrentSystem } from "./internal/context/window.js"

/** Options of the sliding window. */
const Options = Schema.Struct({
  /** Tokens the context may take, leading system messages included. */
  tokenBudget: ContextSettings.ContextSettings.fields.tokenBudget
})

type Options = typeof Options.Type

/**
 * The defaults: a budget of 3000 tokens.
 */
const defaults: Options = { tokenBudget: ContextSettings.defaults.tokenBudget }

const decodeOptions = decode(Options, "SlidingWindowStrategy.make", "options")

/**
 * Builds the strategy. The context holds the leading system messages, then the newest whole turns
 * that fit what is left of the budget. They are a contiguous run ending at the newest turn, so the
 * newest K turns are there whenever they fit, for every K.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Partial<Options> = {}
): Effect.Effect<MemoryManagementStrategy.Service, DataValidationError, RepositoryService | SettingsStore> =>
  Effect.gen(function*() {
    const { tokenBudget } = yield* decodeOptions({ ...defaults, ...options })
    const repository = yield* RepositoryService
    const stored = yield* SettingsStore
    return MemoryManagementStrategy.of({
      name: "sliding-window",
      postAddMessagesHook: () => Effect.void,
      buildContext: Effect.fnUntraced(function*(conversationId, settings) {
        // The budget: the call's, else the conversation's, else the strategy's. Stored settings
        // come with the window, which is read again only for a larger stored budget.
        const first = settings?.tokenBudget ?? tokenBudget
        const read = yield* repository.readWindow(conversationId, { after: "system-prefix", tokenLimit: first })
        const budget = settings?.tokenBudget ?? read.settings.tokenBudget ?? tokenBudget
        const window = budget > first
          ? yield* repository.readWindow(conversationId, { after: "system-prefix", tokenLimit: budget })
          : read
        return yield* assemble(repository, {
          strategy: "sliding-window",
          window: withCurrentSystem(window),
          preamble: emptyPreamble,
          budget
        })
      }, (effect, conversationId, settings) =>
        // Settings stored before the first message give its budget and system prompt.
        Effect.catchTag(effect, "ConversationNotFoundError", () =>
          Effect.map(stored.getSettings(conversationId), (own) =>
            emptyContext(
              conversationId,
              "sliding-window",
              settings?.tokenBudget ?? own.tokenBudget ?? tokenBudget,
              own
            )))),
      awaitIdle: () => Effect.void,
      forget: () => Effect.void,
      subscribe: noEvents
    })
  })

/**
 * The sliding-window strategy as a layer. Invalid options fail its construction.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ApproximateTokenCounter, ChatMemory, MemoryStore, SlidingWindowStrategy } from "effect-chat-memory"
 *
 * // The baseline: the newest turns that fit, no summary.
 * export const Baseline = ChatMemory.layer.pipe(
 *   Layer.provideMerge(SlidingWindowStrategy.layer({ tokenBudget: 3000 })),
 *   Layer.provideMerge(MemoryStore.layer),
 *   Layer.provideMerge(ApproximateTokenCounter.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Partial<Options> = {}
): Layer.Layer<MemoryManagementStrategy, DataValidationError, RepositoryService | SettingsStore> =>
  Layer.effect(MemoryManagementStrategy, make(options))
