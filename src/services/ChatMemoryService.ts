/**
 * The memory's public service: add messages, read them back, clear a conversation, and get the
 * budgeted context for the next model call. This module holds the tag and its laws.
 * `ChatMemory.layer` implements it over a store, a strategy and a token counter.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatMemory } from "effect-chat-memory"
 *
 * // Store an exchange, then ask for the context of the next model call.
 * const program = Effect.gen(function*() {
 *   const memory = yield* ChatMemory.ChatMemoryService
 *   yield* memory.addMessages("c1", [
 *     { role: "user", content: "Ship order A-1001 to Lyon, please." },
 *     { role: "assistant", content: "Done: A-1001 goes to Lyon." }
 *   ])
 *   const context = yield* memory.getContext("c1", { tokenBudget: 2000 })
 *   return context.recent.map((message) => `${message.role}: ${message.content}`)
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(ChatMemory.layerTest()))).then((lines) =>
 *   assert.deepStrictEqual(lines, ["user: Ship order A-1001 to Lyon, please.", "assistant: Done: A-1001 goes to Lyon."])
 * )
 * ```
 *
 * @since 0.1.0
 */
import { Context, type Effect, type Queue, type Scope, type Stream } from "effect"
import type { ConversationSettings } from "../domain/ConversationSettings.js"
import type { ConversationStats } from "../domain/ConversationStats.js"
import type { MemoryContext } from "../domain/MemoryContext.js"
import type { MemoryEvent } from "../domain/MemoryEvent.js"
import type { AnyInput, Message } from "../domain/Message.js"
import type { RecalledTurn } from "../domain/RecalledTurn.js"
import type { ConversationNotFoundError } from "../errors/ConversationNotFoundError.js"
import type { DataValidationError } from "../errors/DataValidationError.js"
import type { RepositoryError } from "../errors/RepositoryError.js"

/**
 * The most messages one `addMessages` call may add.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxMessagesPerCall = 10_000

/**
 * The most inputs one `addMessages` call may take, counting messages and `@effect/ai` response
 * parts. A streamed answer comes in many parts.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxInputsPerCall = 100_000

/**
 * The largest page `getMessages` returns.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxPageSize = 10_000

/**
 * Conversation memory for an agent.
 *
 * Laws:
 * - Every input is validated first. Bad input fails with `DataValidationError` naming the field,
 *   and nothing of that call is stored.
 * - `addMessages` stores all its messages or none, in order, with strictly increasing seqs. It
 *   never waits for, nor fails because of, the strategy's background work. A message's
 *   `createdAt` is the one its caller gave, at most 5 minutes ahead of the write. Otherwise it is
 *   the time of the write. Times need not increase with the seqs.
 * - `getMessages` returns messages oldest first: the newest `limit` ones before seq `before`.
 * - `clearMessages` stops the conversation's background work, then removes its messages, summary
 *   state, records and settings together. Afterwards the conversation is unknown.
 * - `getContext` fails only on bad input and store errors. An unknown or cleared conversation has
 *   an empty context, so the first turn asks for its context like any other. Its budget, K and
 *   view come, by precedence, from the call's `tokenBudget`, the conversation's settings
 *   (`setSettings`), then the strategy's options.
 * - `setSettings` replaces the conversation's overrides, also before its first message. An absent
 *   field returns to the default; the system prompts stay. `getSettings` returns them, empty when
 *   none are set. `setSettings` and `setSystemPrompt` are atomic: concurrent calls lose nothing.
 * - Other methods fail with `ConversationNotFoundError` on a conversation never written, or
 *   cleared, until `addMessages` creates it. `getContext`, `searchMemory` and the settings methods
 *   never do.
 *
 * @since 0.1.0
 * @category tags
 */
export class ChatMemoryService extends Context.Tag("effect-chat-memory/ChatMemoryService")<
  ChatMemoryService,
  ChatMemoryService.Service
>() {}

/**
 * The shape of the service (`Service`) and the types it takes and gives.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace ChatMemoryService {
  /**
   * The memory's operations; their laws are on the tag.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /**
     * Stores messages at the end of the conversation, creating it if new. It takes the library's
     * messages, `@effect/ai` prompt messages, or the response parts of `generateText` and
     * `streamText` as they come. `Message.AnyInput` says how they are stored.
     */
    readonly addMessages: (
      conversationId: string,
      messages: ReadonlyArray<AnyInput>,
      options?: AddMessagesOptions
    ) => Effect.Effect<ReadonlyArray<Message>, DataValidationError | RepositoryError>
    /** Reads stored messages, oldest first. */
    readonly getMessages: (
      conversationId: string,
      options?: GetMessagesOptions
    ) => Effect.Effect<ReadonlyArray<Message>, DataValidationError | ConversationNotFoundError | RepositoryError>
    /** Deletes the conversation: messages, summary state, records and settings. */
    readonly clearMessages: (
      conversationId: string
    ) => Effect.Effect<void, DataValidationError | ConversationNotFoundError | RepositoryError>
    /**
     * The context for the next model call, as the configured strategy assembles it. Its budget is
     * the call's `tokenBudget` when given, else the conversation's, else the strategy's.
     */
    readonly getContext: (
      conversationId: string,
      options?: GetContextOptions
    ) => Effect.Effect<MemoryContext, DataValidationError | RepositoryError>
    /**
     * Stores the conversation's overrides of the strategy's budget, K and view, and returns the
     * settings. They replace any earlier ones, and an absent field returns to the default. The
     * records `strategy` and `systemPrompts` stay unless given. Allowed before the first message.
     * Cleared with the conversation.
     */
    readonly setSettings: (
      conversationId: string,
      settings: typeof ConversationSettings.Encoded
    ) => Effect.Effect<ConversationSettings, DataValidationError | RepositoryError>
    /**
     * The turns that best match `query`, best first, by lexical search over every stored message.
     * Each turn is whole (a tool call with its results) and verbatim, with its seq range, time and
     * score. An unknown or cleared conversation has none.
     */
    readonly searchMemory: (
      conversationId: string,
      query: string,
      options?: SearchOptions
    ) => Effect.Effect<ReadonlyArray<RecalledTurn>, DataValidationError | RepositoryError>
    /**
     * Gives the conversation a new system prompt. From now on its contexts show it in place of the
     * leading system messages and of any earlier prompt. It is kept, with its time, in
     * `ConversationSettings.systemPrompts`. The current prompt given again stores nothing. Returns
     * the settings.
     */
    readonly setSystemPrompt: (
      conversationId: string,
      text: string
    ) => Effect.Effect<ConversationSettings, DataValidationError | RepositoryError>
    /** The conversation's overrides: the empty settings when none are stored. */
    readonly getSettings: (
      conversationId: string
    ) => Effect.Effect<ConversationSettings, DataValidationError | RepositoryError>
    /**
     * Waits until the strategy's background work is done, for one conversation or for all. That
     * includes retries with their backoff and re-checks asked for meanwhile. When it returns, no
     * job for that conversation runs or is scheduled until a write, or a context read that finds
     * the summary behind, starts one.
     */
    readonly awaitIdle: (conversationId?: string) => Effect.Effect<void, DataValidationError>
    /** What the conversation's memory holds and costs now. */
    readonly stats: (
      conversationId: string
    ) => Effect.Effect<ConversationStats, DataValidationError | ConversationNotFoundError | RepositoryError>
    /**
     * The memory's events, from the moment the stream starts. They report messages added, contexts
     * built, summaries applied, summarization failures and fallbacks. A slow consumer misses the
     * oldest.
     */
    readonly events: Stream.Stream<MemoryEvent>
    /** Subscribes to the events at once. The subscription ends with the scope. */
    readonly subscribe: Effect.Effect<Queue.Dequeue<MemoryEvent>, never, Scope.Scope>
  }

  /**
   * The options of `addMessages`.
   *
   * @since 0.2.0
   * @category models
   */
  export interface AddMessagesOptions {
    /**
     * The user the conversation belongs to, bound by its first write that names one. If it belongs
     * to another user, the call fails with `DataValidationError` naming `options.userId`.
     */
    readonly userId?: string | undefined
  }

  /**
   * The options of `getContext`.
   *
   * @since 0.1.0
   * @category models
   */
  export interface GetContextOptions {
    /** Tokens this context may take, leading system messages included: a positive integer. */
    readonly tokenBudget?: number | undefined
    /**
     * What the next model call is about, normally the new user message. With recall on, the
     * context adds the older turns that best match it (`MemoryContext.recalled`), within the recall
     * share of the budget. Without it, no recall.
     */
    readonly query?: string | undefined
    /**
     * The conversation's user. A conversation not written yet gets the user's facts, and with a
     * query, the user's earlier turns. One that belongs to another user fails with
     * `DataValidationError` naming `options.userId`. A user's conversation shows its user's facts
     * whether or not the call names the user.
     */
    readonly userId?: string | undefined
  }

  /**
   * The options of `searchMemory`.
   *
   * @since 0.1.0
   * @category models
   */
  export interface SearchOptions {
    /** At most this many turns: 1 to 50, 5 by default. */
    readonly limit?: number | undefined
    /** Only turns that end before this seq. */
    readonly before?: number | undefined
    /**
     * Search every conversation of this user, never another user's. Each turn is labelled with its
     * conversation. `before` applies to this conversation only. A conversation of another user is
     * refused: the call fails with `DataValidationError` naming `options.userId`.
     */
    readonly userId?: string | undefined
  }

  /**
   * The options of `getMessages`: a page of the log.
   *
   * @since 0.1.0
   * @category models
   */
  export interface GetMessagesOptions {
    /** At most this many messages, the newest of the range: 1 to `MaxPageSize`. */
    readonly limit?: number | undefined
    /** Only messages with a seq below this one. */
    readonly before?: number | undefined
    /**
     * The caller's user. On a conversation of another user, the call fails with `DataValidationError`
     * naming `options.userId`.
     */
    readonly userId?: string | undefined
  }
}
