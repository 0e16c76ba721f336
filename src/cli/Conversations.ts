/**
 * The commands that read or clear a stored conversation: `context`, `messages`, `inspect` and
 * `clear`. They are for a store that outlives the process, such as PGlite with a data directory or
 * PostgreSQL. They read what `replay` or `chat` wrote, with the strategy that wrote it, unless
 * `--strategy` says otherwise.
 */
import { Console, DateTime, Effect, Option, Predicate, Schema } from "effect"
import { ConversationStats } from "../domain/ConversationStats.js"
import { MemoryContext } from "../domain/MemoryContext.js"
import { Message } from "../domain/Message.js"
import { SummarizationRecord, SummaryState } from "../domain/SummaryState.js"
import type * as ChatMemoryLive from "../layers/ChatMemoryLive.js"
import { ChatMemoryService } from "../services/ChatMemoryService.js"
import { RepositoryService } from "../services/RepositoryService.js"
import { SummaryStore } from "../services/SummaryStore.js"
import { CliError } from "./Errors.js"
import * as Memory from "./Memory.js"
import * as Report from "./Report.js"
import * as Settings from "./Settings.js"

/** The memory built these values from valid parts, so encoding them cannot fail. */
const encode = <A, I>(schema: Schema.Schema<A, I>, value: A) => Effect.orDie(Schema.encode(schema)(value))

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

/**
 * Runs `body` over the memory of a stored conversation. An unknown conversation says where it
 * looked. None of these commands creates a store: on a data directory without one, the
 * conversation is not found.
 */
const withMemory = <A, E>(
  flags: Settings.Flags,
  conversationId: string,
  body: (chosen: Memory.Chosen) => Effect.Effect<A, E, ChatMemoryLive.Services>
) =>
  Memory.withConversation(flags, conversationId, (chosen) => {
    const hint = Settings.isPersistent(chosen.options.store)
      ? ""
      : " (the store is in memory and starts empty on each run: pass " +
        `${Settings.optionName(variables.dataDir)} or set ${variables.dataDir.name}, or ` +
        `${variables.store.name}=postgres with ${variables.databaseUrl.name}, to keep conversations between runs)`
    return body(chosen).pipe(
      Effect.mapError((error) =>
        Predicate.isTagged(error, "ConversationNotFoundError") && Predicate.hasProperty(error, "message")
          ? new CliError({ reason: `${String(error.message)}${hint}` })
          : error
      )
    )
  }, { existing: true })

/** How `inspect` tells where the strategy it read the conversation with came from. */
const strategySources: Record<Memory.StrategySource, string> = {
  recorded: "recorded by the writer of the conversation",
  flag: `${Settings.optionName(Settings.variables.strategy)} or ${Settings.variables.strategy.name}`,
  default: "the default: none recorded"
}

const { variables } = Settings

/** What a command on a stored conversation was asked. */
export interface Input {
  readonly conversationId: string
  readonly flags: Settings.Flags
}

/** `context`: the context the model would get next, with the older turns `query` recalls. */
export const context = ({ conversationId, flags, json, query, user }: Input & {
  readonly json: boolean
  readonly query: Option.Option<string>
  readonly user: Option.Option<string>
}) =>
  withMemory(flags, conversationId, () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      // The service gives an unknown conversation an empty context. Without a user, here it is a
      // mistyped id. With one, it is what a new conversation of the user gets.
      if (Option.isNone(user)) yield* memory.getMessages(conversationId, { limit: 1 })
      const value = yield* memory.getContext(conversationId, {
        ...(Option.isSome(query) ? { query: query.value } : {}),
        ...(Option.isSome(user) ? { userId: user.value } : {})
      })
      if (json) return yield* printJson(yield* encode(MemoryContext, value))
      yield* Console.log(`Context for the next model call (${Report.contextLine(value)}):\n`)
      yield* Console.log(Report.context(value))
    }))

/** `messages`: a page of the stored messages, oldest first. */
export const messages = ({ before, conversationId, flags, json, limit }: Input & {
  readonly limit: Option.Option<number>
  readonly before: Option.Option<number>
  readonly json: boolean
}) =>
  withMemory(flags, conversationId, () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const page = yield* memory.getMessages(conversationId, {
        limit: Option.getOrUndefined(limit),
        before: Option.getOrUndefined(before)
      })
      if (json) return yield* printJson(yield* encode(Schema.Array(Message), page))
      for (const message of page) yield* Console.log(Report.message(message))
    }))

/** `inspect`: the summary state, facts, cursor and summarization records. */
export const inspect = ({ conversationId, flags, json }: Input & { readonly json: boolean }) =>
  withMemory(flags, conversationId, ({ options, strategySource }) =>
    Effect.gen(function*() {
      const repository = yield* RepositoryService
      const summaries = yield* SummaryStore
      const memory = yield* ChatMemoryService
      const stats = yield* memory.stats(conversationId)
      const info = yield* repository.getConversation(stats.conversationId)
      const state = yield* summaries.getSummaryState(stats.conversationId)
      const records = yield* summaries.listSummarizations(stats.conversationId)
      if (json) {
        return yield* printJson({
          conversation: {
            ...info,
            createdAt: DateTime.formatIso(info.createdAt),
            updatedAt: DateTime.formatIso(info.updatedAt)
          },
          summaryState: yield* encode(SummaryState, state),
          summarizations: yield* encode(Schema.Array(SummarizationRecord), records),
          stats: yield* encode(ConversationStats, stats),
          strategySource
        })
      }
      const roles = Object.entries(info.roleCounts).filter(([, n]) => n > 0).map(([role, n]) => `${role} ${n}`)
      yield* Console.log(`Conversation "${info.conversationId}"`)
      yield* Console.log(Report.table([
        ["strategy", `${stats.strategy} (${strategySources[strategySource]})`],
        ["messages", `${info.messageCount} (the last is #${info.lastSeq}), ${info.tokenCount} tokens`],
        ["roles", roles.join(", ")],
        ["created", DateTime.formatIso(info.createdAt)],
        ["updated", DateTime.formatIso(info.updatedAt)],
        [
          "summary covers",
          state.cursor === 0 ? "nothing yet" : `messages up to #${state.cursor} (summary version ${state.version})`
        ],
        ["not summarized yet", `${Report.count(stats.lagMessages, "message")}, ${stats.lagTokens} tokens`],
        [
          "next context",
          `${stats.contextTokens} tokens, ${
            Report.count(stats.turnsShown, "turn")
          } shown, ${stats.turnsOmitted} left out ` +
          "(neither shown nor summarized)"
        ],
        ["tokens stored per context token", Report.ratio(stats.compressionRatio)]
      ]))
      yield* Console.log("\nSettings it is read with:")
      yield* Console.log(Report.table(Settings.rows(options)))
      yield* Console.log(`\nFacts (${state.facts.length}):`)
      for (const fact of state.facts) yield* Console.log(`  - ${fact.key} [${fact.category}]: ${fact.value}`)
      yield* Console.log(`\nNarrative:\n${state.narrative.length === 0 ? "  (none)" : state.narrative}`)
      yield* Console.log(`\nSummarizations (${records.length}):`)
      for (const record of records) {
        yield* Console.log(
          `  v${record.version}  seq ${record.fromSeq}..${record.toSeq}  ${record.mode}  ${record.skillId}` +
            `${
              record.model === null ? "" : ` (${record.model})`
            }  ${record.inputTokens} in, ${record.outputTokens} out` +
            `  ${record.durationMs} ms  ${DateTime.formatIso(record.createdAt)}`
        )
      }
    }))

/** `clear`: deletes a conversation with its summary state, records and settings. */
export const clear = ({ conversationId, flags }: Input) =>
  withMemory(flags, conversationId, () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* memory.clearMessages(conversationId)
      yield* Console.log(`cleared conversation "${conversationId}"`)
    }))
