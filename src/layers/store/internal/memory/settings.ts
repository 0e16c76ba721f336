/**
 * The in-memory store's settings (`SettingsStore`), handed out as copies. They sit beside the
 * conversations, so an id may hold settings before its first message.
 */
import { Effect, HashMap, Option, Ref, Schema } from "effect"
import * as ConversationSettings from "../../../../domain/ConversationSettings.js"
import { empty as emptySettings, isEmpty } from "../../../../domain/internal/conversationSettings.js"
import { SettingsStore } from "../../../../services/SettingsStore.js"
import type { State } from "./state.js"

/** Settings as a reader gets them: a fresh copy, as for messages. */
const copySettings = (settings: ConversationSettings.ConversationSettings): ConversationSettings.ConversationSettings =>
  new ConversationSettings.ConversationSettings({ ...settings }, { disableValidation: true })

/**
 * Settings as stored: encoded and decoded again, so only the schema's fields are kept, as in SQL.
 */
const storableSettings = (settings: ConversationSettings.ConversationSettings) =>
  Effect.flatMap(
    Schema.encode(ConversationSettings.ConversationSettings)(settings),
    Schema.decode(ConversationSettings.ConversationSettings)
  ).pipe(
    // The class validates on construction: anything else came past the type system.
    Effect.catchTag("ParseError", (error) => Effect.dieMessage(`setSettings: invalid settings: ${error.message}`))
  )

/** The settings over the store's data. */
export const make = ({ ref }: State): SettingsStore.Service =>
  SettingsStore.of({
    getSettings: Effect.fnUntraced(function*(conversationId) {
      const { settings } = yield* Ref.get(ref)
      return Option.match(HashMap.get(settings, conversationId), {
        onNone: () => emptySettings,
        onSome: copySettings
      })
    }),

    setSettings: Effect.fnUntraced(function*(conversationId, settings) {
      const stored = yield* storableSettings(settings)
      // Empty settings are stored as none: the id holds only its log.
      yield* Ref.update(ref, (snapshot) => ({
        ...snapshot,
        settings: isEmpty(stored)
          ? HashMap.remove(snapshot.settings, conversationId)
          : HashMap.set(snapshot.settings, conversationId, stored)
      }))
      return copySettings(stored)
    })
  })
