/**
 * The memory a command opens on a stored conversation. It is the configured one, with the strategy
 * that wrote the conversation, as `replay` and `chat` record it in its settings. `--strategy` or
 * `MEMORY_STRATEGY` overrides it. So `context` and `inspect` read a hierarchical conversation's
 * facts whatever the default.
 */
import { FileSystem } from "@effect/platform"
import { Effect, Layer, Option, Schema } from "effect"
import { join } from "node:path"
import { ConversationId } from "../domain/ConversationId.js"
import type { StrategyName } from "../domain/ConversationSettings.js"
import * as ChatMemory from "../layers/ChatMemory.js"
import * as ChatMemoryConfig from "../layers/ChatMemoryConfig.js"
import * as ChatMemoryLive from "../layers/ChatMemoryLive.js"
import { SettingsStore } from "../services/SettingsStore.js"
import { CliError } from "./Errors.js"
import * as Settings from "./Settings.js"

/** Where the strategy a command runs with came from. */
export type StrategySource = "flag" | "recorded" | "default"

/** The options a command runs with, and where their strategy came from. */
export interface Chosen {
  readonly options: ChatMemoryConfig.Options
  readonly strategySource: StrategySource
}

/** As `ChatMemoryLive.layer`, over a store that is already open. */
const layerOverStore = (options: ChatMemoryConfig.Options) =>
  ChatMemory.layerWith({ maxMessageLength: options.maxMessageLength }).pipe(
    Layer.provideMerge(ChatMemoryLive.layerStrategy(options)),
    Layer.provideMerge(ChatMemoryLive.layerSkill(options.summarizer ?? ChatMemoryConfig.defaults.summarizer)),
    Layer.provideMerge(ChatMemoryLive.layerTokenCounter(options.tokenizer ?? ChatMemoryConfig.defaults.tokenizer))
  )

/** The strategy recorded for a conversation, if any. An invalid id has none; the service reports it. */
const recordedStrategy = (conversationId: string) =>
  Option.match(Schema.decodeUnknownOption(ConversationId)(conversationId), {
    onNone: () => Effect.succeed<StrategyName | undefined>(undefined),
    onSome: (id) =>
      Effect.flatMap(
        SettingsStore,
        (repository) => Effect.map(repository.getSettings(id), (settings) => settings.strategy)
      )
  })

/**
 * Fails when the options name a PGlite data directory that holds no store. A command that only
 * reads or clears a conversation finds nothing there. Opening the store would create one: some
 * 40 MB, and seconds to write. A directory holds a store when it holds `PG_VERSION`, the file
 * PGlite writes last when it creates one.
 */
const requireStore = (conversationId: string, options: ChatMemoryConfig.Options) =>
  Effect.gen(function*() {
    const store = options.store ?? ChatMemoryConfig.defaults.store
    if (store._tag !== "pglite" || store.dataDir === undefined) return
    const fs = yield* FileSystem.FileSystem
    if (yield* Effect.orElseSucceed(fs.exists(join(store.dataDir, "PG_VERSION")), () => false)) return
    const { dataDir } = Settings.variables
    return yield* new CliError({
      reason: `Conversation not found: ${JSON.stringify(conversationId)} (no store at ${store.dataDir}: ` +
        `replay or chat creates one there; ${Settings.flagOf(dataDir.name) ?? dataDir.name} or ${dataDir.name} ` +
        "names another)"
    })
  })

/**
 * Runs `body` over the memory of a stored conversation. The store is opened once, and the
 * strategy recorded for `conversationId` is read from it. The rest of the memory is built over it
 * with that strategy, unless the flags or the environment name one. With `existing`, a data
 * directory without a store fails with one line, and no store is created.
 */
export const withConversation = <A, E, R>(
  flags: Settings.Flags,
  conversationId: string,
  body: (chosen: Chosen) => Effect.Effect<A, E, R>,
  { existing }: { readonly existing: boolean }
) =>
  Effect.gen(function*() {
    const options = yield* Settings.resolve(flags)
    if (existing) yield* requireStore(conversationId, options)
    const named = yield* Settings.strategyNamed(flags)
    return yield* Effect.gen(function*() {
      const recorded = named ? undefined : yield* recordedStrategy(conversationId)
      const chosen: Chosen = recorded === undefined
        ? { options, strategySource: named ? "flag" : "default" }
        : { options: { ...options, strategy: recorded }, strategySource: "recorded" }
      return yield* body(chosen).pipe(Effect.provide(layerOverStore(chosen.options)))
    }).pipe(Effect.provide(ChatMemoryLive.layerStore(options.store ?? ChatMemoryConfig.defaults.store)))
  })
