/**
 * The memory a command opens on a stored conversation: the configured one, with the strategy
 * that wrote the conversation (recorded in its settings by `replay` and `chat`) unless
 * `--strategy` or `MEMORY_STRATEGY` names one, so that `context` and `inspect` read a
 * hierarchical conversation's facts whatever the default.
 */
import { Effect, Layer, Option, Schema } from "effect"
import { ConversationId } from "../domain/ConversationId.js"
import type { StrategyName } from "../domain/ConversationSettings.js"
import * as ChatMemory from "../layers/ChatMemory.js"
import * as ChatMemoryConfig from "../layers/ChatMemoryConfig.js"
import * as ChatMemoryLive from "../layers/ChatMemoryLive.js"
import { SettingsRepository } from "../services/SettingsRepository.js"
import * as Settings from "./Settings.js"

/** Where the strategy a command runs with came from. */
export type StrategySource = "flag" | "recorded" | "default"

/** The options a command runs with, and where their strategy came from. */
export interface Chosen {
  readonly options: ChatMemoryConfig.Options
  readonly strategySource: StrategySource
}

/** As `ChatMemoryLive.layer`, over a store that is already open (it was read first). */
const layerOverStore = (options: ChatMemoryConfig.Options) =>
  ChatMemory.layerWith({ maxMessageLength: options.maxMessageLength }).pipe(
    Layer.provideMerge(ChatMemoryLive.layerStrategy(options)),
    Layer.provideMerge(ChatMemoryLive.layerSkill(options.summarizer ?? ChatMemoryConfig.defaults.summarizer)),
    Layer.provideMerge(ChatMemoryLive.layerTokenCounter(options.tokenizer ?? ChatMemoryConfig.defaults.tokenizer))
  )

/** The strategy recorded for a conversation, if any (an invalid id has none: the service names it). */
const recordedStrategy = (conversationId: string) =>
  Option.match(Schema.decodeUnknownOption(ConversationId)(conversationId), {
    onNone: () => Effect.succeed<StrategyName | undefined>(undefined),
    onSome: (id) =>
      Effect.flatMap(
        SettingsRepository,
        (repository) => Effect.map(repository.getSettings(id), (settings) => settings.strategy)
      )
  })

/**
 * Runs `body` over the memory of a stored conversation: the store is opened once, the strategy
 * recorded for `conversationId` is read from it, and the rest of the memory is built over it with
 * that strategy, unless the flags or the environment name one.
 */
export const withConversation = <A, E, R>(
  flags: Settings.Flags,
  conversationId: string,
  body: (chosen: Chosen) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const options = yield* Settings.resolve(flags)
    const named = yield* Settings.strategyNamed(flags)
    return yield* Effect.gen(function*() {
      const recorded = named ? undefined : yield* recordedStrategy(conversationId)
      const chosen: Chosen = recorded === undefined
        ? { options, strategySource: named ? "flag" : "default" }
        : { options: { ...options, strategy: recorded }, strategySource: "recorded" }
      return yield* body(chosen).pipe(Effect.provide(layerOverStore(chosen.options)))
    }).pipe(Effect.provide(ChatMemoryLive.layerStore(options.store ?? ChatMemoryConfig.defaults.store)))
  })
