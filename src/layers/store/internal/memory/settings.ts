/**
 * The in-memory store's settings (`SettingsStore`), kept beside the conversations so that an
 * id may hold settings before its first message, and handed out as copies.
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
 * Settings as stored: their encoded form decoded again, so that only the schema's fields are kept,
 * as the SQL stores keep them.
 */
const storableSettings = (settings: ConversationSettings.ConversationSettings) =>
  Effect.flatMap(
    Schema.encode(ConversationSettings.ConversationSettings)(settings),
    Schema.decode(ConversationSettings.ConversationSettings)
  ).pipe(
    // The port takes valid settings (the class validates on construction): anything else came past
    // the type system.
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
      // The empty settings are stored as none: the id then holds nothing but what its log holds.
      yield* Ref.update(ref, (snapshot) => ({
        ...snapshot,
        settings: isEmpty(stored)
          ? HashMap.remove(snapshot.settings, conversationId)
          : HashMap.set(snapshot.settings, conversationId, stored)
      }))
      return copySettings(stored)
    })
  })
