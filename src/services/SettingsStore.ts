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
 * - Settings are kept per conversation id beside the log: `getSettings` returns the stored
 *   overrides, or the empty settings when none are stored (also for an id without messages);
 *   `setSettings` replaces the whole set (an absent field is cleared, the empty settings store
 *   none) and returns what is stored. It may be called before the first append and does not
 *   create the conversation; appends and commits never change settings. Settings of one id are
 *   never visible from another.
 * - Neither operation fails on an id that holds no conversation (they are the exception to the
 *   log's `ConversationNotFoundError` law). `RepositoryService.deleteConversation` clears the id's
 *   settings with the rest of it; an id that holds settings only is found and deleted by it.
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
    /** The conversation's overrides of the memory's defaults: the empty settings when none are stored. */
    readonly getSettings: (
      conversationId: ConversationId
    ) => Effect.Effect<ConversationSettings, RepositoryError>
    /**
     * Replaces the conversation's overrides (an absent field is cleared) and returns what is
     * stored. Allowed before the conversation's first message; it does not create the conversation.
     */
    readonly setSettings: (
      conversationId: ConversationId,
      settings: ConversationSettings
    ) => Effect.Effect<ConversationSettings, RepositoryError>
  }
}
