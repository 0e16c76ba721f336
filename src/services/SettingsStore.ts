/**
 * The settings port: each conversation's overrides of the memory's defaults (budget, K, view…),
 * kept beside its log.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import { Context } from "effect"
import type { ConversationId } from "../domain/ConversationId.js"
import type { ConversationSettings } from "../domain/ConversationSettings.js"
import type { RepositoryError } from "../errors/RepositoryError.js"

/**
 * Stores per-conversation settings. Every implementation passes the settings contract suite.
 *
 * Laws:
 * - Settings are kept per conversation id beside the log. Settings of one id are never visible
 *   from another.
 * - `getSettings` returns the stored overrides, or the empty settings when none are stored, also
 *   for an id without messages.
 * - `setSettings` replaces the whole set and returns what is stored. An absent field is cleared,
 *   and the empty settings store none. It may be called before the first append, and does not
 *   create the conversation.
 * - `updateSettings` stores `f` of the current settings, as `setSettings` would, and returns them.
 *   It is atomic per id: concurrent updates, from fibers or processes, lose none. `f` may run more
 *   than once, and must not have effects.
 * - Appends and commits never change settings.
 * - Neither operation fails on an id that holds no conversation. They are the exception to the
 *   log's `ConversationNotFoundError` law.
 * - `RepositoryService.deleteConversation` clears the id's settings with the rest. It finds and
 *   deletes an id that holds settings only.
 *
 * @since 0.1.0
 * @category tags
 */
export class SettingsStore extends Context.Tag("effect-chat-memory/SettingsStore")<
  SettingsStore,
  SettingsStore.Service
>() {}

/**
 * The shape of the service (`Service`) and the types it takes and gives.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace SettingsStore {
  /**
   * The settings' operations; their laws are on the tag.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** The conversation's overrides of the memory's defaults, empty when none are stored. */
    readonly getSettings: (
      conversationId: ConversationId
    ) => Effect.Effect<ConversationSettings, RepositoryError>
    /**
     * Replaces the conversation's overrides and returns what is stored. An absent field is cleared.
     * Allowed before the first message, and does not create the conversation.
     */
    readonly setSettings: (
      conversationId: ConversationId,
      settings: ConversationSettings
    ) => Effect.Effect<ConversationSettings, RepositoryError>
    /**
     * Replaces the conversation's settings with `f` of the current ones, atomically, and returns
     * what is stored.
     *
     * @since 0.2.0
     */
    readonly updateSettings: (
      conversationId: ConversationId,
      f: (current: ConversationSettings) => ConversationSettings
    ) => Effect.Effect<ConversationSettings, RepositoryError>
  }
}
