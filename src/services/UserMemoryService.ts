/**
 * What an app does with a user of the memory: list the user's conversations, read and edit the
 * user's facts, search the user's history, and erase the user. This module holds the tag and its
 * laws. The composed memory provides it beside `ChatMemoryService`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatMemory } from "effect-chat-memory"
 *
 * const program = Effect.gen(function*() {
 *   const memory = yield* ChatMemory.ChatMemoryService
 *   const users = yield* ChatMemory.UserMemoryService
 *   // A conversation belongs to the user its first write names.
 *   yield* memory.addMessages("support-1", [{ role: "user", content: "My dog is called Rex." }], { userId: "ana" })
 *   // What the app knows from its own data.
 *   yield* users.setFacts("ana", [{ key: "plan", value: "premium" }])
 *   const facts = yield* users.getFacts("ana")
 *   const conversations = yield* users.listConversations("ana", { limit: 5 })
 *   // "Delete everything you know about me": every conversation, message, summary and fact of the user.
 *   const erased = yield* users.erase("ana")
 *   return { facts, conversations, erased }
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(ChatMemory.layerTest()))).then(({ conversations, erased, facts }) => {
 *   assert.deepStrictEqual(facts.map((fact) => `${fact.key}: ${fact.value}`), ["plan: premium"])
 *   assert.deepStrictEqual(conversations.map((entry) => entry.conversationId), ["support-1"])
 *   assert.strictEqual(erased.messages, 1)
 * })
 * ```
 *
 * @since 0.2.0
 */
import { Context, type DateTime, type Effect } from "effect"
import type { ConversationEntry } from "../domain/ConversationEntry.js"
import type { FactCategory } from "../domain/Fact.js"
import type { RecalledTurn } from "../domain/RecalledTurn.js"
import type { UserErasure } from "../domain/UserErasure.js"
import type { UserFact } from "../domain/UserFact.js"
import type { DataValidationError } from "../errors/DataValidationError.js"
import type { RepositoryError } from "../errors/RepositoryError.js"

/**
 * A user's memory, across the user's conversations.
 *
 * Laws:
 * - Every input is validated first. Bad input fails with `DataValidationError` naming the field,
 *   and nothing of that call is stored.
 * - Nothing of another user, nor of a conversation without a user, is ever returned. User ids are
 *   compared exactly as given.
 * - `setFacts` and `removeFacts` are the app's statements, made now. A later statement of the same
 *   key, in a conversation or by the app, replaces them. An earlier one does not.
 * - `erase` stops the background work of the user's conversations. Then, in one transaction, it
 *   removes every conversation, message, summary, setting, vector and fact of the user, and says
 *   what it removed. Afterwards the user is unknown: every read is empty.
 *
 * @since 0.2.0
 * @category tags
 */
export class UserMemoryService extends Context.Tag("effect-chat-memory/UserMemoryService")<
  UserMemoryService,
  UserMemoryService.Service
>() {}

/**
 * The shape of the service (`Service`) and the types it takes and gives.
 *
 * @since 0.2.0
 * @category models
 */
export declare namespace UserMemoryService {
  /**
   * The user's operations; their laws are on the tag.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Service {
    /** The user's conversations, the latest said first: `limit` of them, 20 by default, at most 1000. */
    readonly listConversations: (
      userId: string,
      options?: ListOptions
    ) => Effect.Effect<ReadonlyArray<ConversationEntry>, DataValidationError | RepositoryError>
    /** What is known about the user, the latest said first. */
    readonly getFacts: (userId: string) => Effect.Effect<ReadonlyArray<UserFact>, DataValidationError | RepositoryError>
    /** States facts the app knows about the user from its own data, and returns those applied. */
    readonly setFacts: (
      userId: string,
      facts: ReadonlyArray<FactInput>
    ) => Effect.Effect<ReadonlyArray<UserFact>, DataValidationError | RepositoryError>
    /** Removes facts about the user, by key. */
    readonly removeFacts: (
      userId: string,
      keys: ReadonlyArray<string>
    ) => Effect.Effect<void, DataValidationError | RepositoryError>
    /** The turns of the user's conversations that best match `query`, best first, labelled by conversation. */
    readonly search: (
      userId: string,
      query: string,
      options?: { readonly limit?: number | undefined }
    ) => Effect.Effect<ReadonlyArray<RecalledTurn>, DataValidationError | RepositoryError>
    /** Removes everything of the user, and says what it removed. */
    readonly erase: (userId: string) => Effect.Effect<UserErasure, DataValidationError | RepositoryError>
  }

  /**
   * The options of `listConversations`: a page of a user's conversations.
   *
   * @since 0.2.0
   * @category models
   */
  export interface ListOptions {
    /** At most this many: 1 to 1000, 20 by default. */
    readonly limit?: number | undefined
    /**
     * The next page: the conversations listed after this one, the last entry of the previous page.
     * Conversations said at the same time are not skipped.
     */
    readonly after?: { readonly lastSaidAt: DateTime.Utc | string; readonly conversationId: string } | undefined
    /** Only conversations whose latest message was said before this time (ISO 8601). */
    readonly before?: string | undefined
  }

  /**
   * A fact the app states about a user.
   *
   * @since 0.2.0
   * @category models
   */
  export interface FactInput {
    readonly key: string
    readonly value: string
    /** `ENTITY` by default. */
    readonly category?: FactCategory | undefined
  }
}
