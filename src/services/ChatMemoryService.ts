/**
 * The public face of the memory: add messages, read them back, clear a conversation, and get the
 * budgeted context for the next model call. The tag and its laws; the implementation over a
 * store, a strategy and a token counter is `ChatMemory.layer`.
 *
 * @since 0.1.0
 */
import { Context, type Effect, type Queue, type Scope, type Stream } from "effect"
import type { ConversationStats } from "../domain/ConversationStats.js"
import type { MemoryContext } from "../domain/MemoryContext.js"
import type { MemoryEvent } from "../domain/MemoryEvent.js"
import type { Message, MessageInput } from "../domain/Message.js"
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
 *   never waits for, nor fails because of, background work of the strategy.
 * - `getMessages` returns messages oldest first: the newest `limit` ones before seq `before`.
 * - `clearMessages` stops the conversation's background work, then removes its messages, summary
 *   state and records together; afterwards the conversation is unknown.
 * - `getContext` fails only on store errors and unknown conversations.
 * - Methods on a conversation that was never written (or was cleared) fail with
 *   `ConversationNotFoundError`; `addMessages` creates it.
 *
 * @since 0.1.0
 * @category tags
 */
export class ChatMemoryService extends Context.Tag("effect-chat-memory/ChatMemoryService")<
  ChatMemoryService,
  ChatMemoryService.Service
>() {}

/**
 * @since 0.1.0
 */
export declare namespace ChatMemoryService {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Stores messages at the end of the conversation, creating it if new. */
    readonly addMessages: (
      conversationId: string,
      messages: ReadonlyArray<typeof MessageInput.Encoded>
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
    /** The context for the next model call, as the configured strategy assembles it. */
    readonly getContext: (
      conversationId: string
    ) => Effect.Effect<MemoryContext, DataValidationError | ConversationNotFoundError | RepositoryError>
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
