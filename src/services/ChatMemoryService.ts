/**
 * The public face of the memory: add messages, read them back, clear a conversation, and get the
 * budgeted context for the next model call. The tag and its laws; the implementation over a
 * store, a strategy and a token counter is `ChatMemory.layer`.
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
 * The most inputs one `addMessages` call may take: messages, and `@effect/ai` response parts (a
 * streamed answer comes in many parts).
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
 * - Every input is validated first; bad input fails with `DataValidationError` naming the field,
 *   and nothing of that call is stored.
 * - `addMessages` stores all its messages or none, in order, with strictly increasing seqs; it
 *   never waits for, nor fails because of, background work of the strategy. A message's
 *   `createdAt` is the one its caller gave (never more than 5 minutes ahead
 *   of the write), else the time of the write; times need not increase with the seqs.
 * - `getMessages` returns messages oldest first: the newest `limit` ones before seq `before`.
 * - `clearMessages` stops the conversation's background work, then removes its messages, summary
 *   state, records and settings together; afterwards the conversation is unknown.
 * - `getContext` fails only on bad input and store errors: an unknown (or cleared) conversation
 *   has an empty context, so the first turn asks for its context like any other. Its budget, K
 *   and view are, by precedence: the call's `tokenBudget`, the conversation's settings
 *   (`setSettings`), the strategy's options.
 * - `setSettings` replaces the conversation's settings (an absent field returns to the default),
 *   also before its first message; `getSettings` returns them (empty when none are set).
 * - Methods on a conversation that was never written (or was cleared) fail with
 *   `ConversationNotFoundError` (except `getContext`, `searchMemory` and the settings);
 *   `addMessages` creates it.
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
     * Stores messages at the end of the conversation, creating it if new: messages in the
     * library's form, `@effect/ai` prompt messages, or the response parts of `generateText` and
     * `streamText` as they come (`Message.AnyInput` says how they are stored).
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
    /** Deletes the conversation: messages, summary state and records. */
    readonly clearMessages: (
      conversationId: string
    ) => Effect.Effect<void, DataValidationError | ConversationNotFoundError | RepositoryError>
    /**
     * The context for the next model call, as the configured strategy assembles it, within the
     * call's `tokenBudget` when given (a larger model gets more, a small one less), else the
     * conversation's, else the strategy's.
     */
    readonly getContext: (
      conversationId: string,
      options?: GetContextOptions
    ) => Effect.Effect<MemoryContext, DataValidationError | RepositoryError>
    /**
     * Stores the conversation's overrides of the strategy's budget, K and view, replacing any
     * earlier ones (an absent field returns to the default), and returns them. Allowed before the
     * conversation's first message; cleared with the conversation.
     */
    readonly setSettings: (
      conversationId: string,
      settings: typeof ConversationSettings.Encoded
    ) => Effect.Effect<ConversationSettings, DataValidationError | RepositoryError>
    /**
     * The turns of the conversation that best match `query` (lexical search over every stored
     * message, summarized or not), best first: each whole (a tool call with its results),
     * verbatim, with its seq range, time and score. An unknown or cleared conversation has none.
     */
    readonly searchMemory: (
      conversationId: string,
      query: string,
      options?: SearchOptions
    ) => Effect.Effect<ReadonlyArray<RecalledTurn>, DataValidationError | RepositoryError>
    /**
     * Gives the conversation a new system prompt: from now on its contexts show it in place of the
     * leading system messages (and of any earlier one). The change is kept in the conversation's
     * settings (`ConversationSettings.systemPrompts`, with when it was given); the same prompt as
     * the current one stores nothing. Returns the settings.
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
     * Waits until the strategy's background work is done, for one conversation or for all,
     * retries with their backoff and re-checks asked for meanwhile included: when it returns, no
     * job for that conversation runs or is scheduled, until a write (or a context read that finds
     * the summary behind) starts one.
     */
    readonly awaitIdle: (conversationId?: string) => Effect.Effect<void, DataValidationError>
    /** What the conversation's memory holds and costs now. */
    readonly stats: (
      conversationId: string
    ) => Effect.Effect<ConversationStats, DataValidationError | ConversationNotFoundError | RepositoryError>
    /**
     * The memory's events from the moment the stream starts: messages added, contexts built,
     * summaries applied, summarization failures, fallbacks. A slow consumer misses the oldest.
     */
    readonly events: Stream.Stream<MemoryEvent>
    /** Subscribes to the events at once; the subscription ends with the scope. */
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
     * The user the conversation belongs to: bound by its first write that names one, and refused
     * (`DataValidationError` naming `options.userId`, nothing stored) when it belongs to another.
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
     * What the next model call is about (normally the new user message): with recall on, the
     * context adds the older turns that best match it (`MemoryContext.recalled`), within the
     * recall share of the budget. Without it, no recall.
     */
    readonly query?: string | undefined
    /**
     * The conversation's user. A conversation not written yet gets what is known about the user
     * (and, with a query, the user's earlier turns); one that belongs to another user is refused
     * (`DataValidationError` naming `options.userId`). A conversation of a user shows what is known
     * about its user whether or not the call names it.
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
     * Search every conversation of this user (those of the conversation only below `before`), each
     * turn labelled with its conversation; never another user's.
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
    /** At most this many messages (the newest of the range); 1 to `MaxPageSize`. */
    readonly limit?: number | undefined
    /** Only messages with a seq below this one. */
    readonly before?: number | undefined
  }
}
