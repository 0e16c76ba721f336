/**
 * The SQL store's settings (`SettingsStore`): one JSON row per conversation, apart from its log, so
 * an id may hold settings before its first message.
 */
import { DateTime, Effect, Option, Schema } from "effect"
import * as ConversationSettings from "../../../../domain/ConversationSettings.js"
import { empty as emptySettings, isEmpty } from "../../../../domain/internal/conversationSettings.js"
import { SettingsStore } from "../../../../services/SettingsStore.js"
import { settingsErrors } from "./errors.js"
import type { Statements } from "./statements.js"

/** The settings as the JSON stored in the `settings` column. */
const settingsJson = (settings: ConversationSettings.ConversationSettings) =>
  Schema.encode(ConversationSettings.ConversationSettings)(settings).pipe(
    Effect.map((encoded) => JSON.stringify(encoded)),
    // The port takes valid settings, since the class validates on construction. Anything else got
    // past the type system.
    Effect.catchTag("ParseError", (error) => Effect.dieMessage(`setSettings: invalid settings: ${error.message}`))
  )

/** The settings over the store's statements. */
export const make = (statements: Statements): SettingsStore.Service =>
  SettingsStore.of({
    getSettings: Effect.fnUntraced(
      function*(conversationId) {
        const row = yield* statements.selectSettings(conversationId)
        return Option.match(row, { onNone: () => emptySettings, onSome: (r) => r.settings })
      },
      (effect, conversationId) => Effect.catchTags(effect, settingsErrors("getSettings", conversationId))
    ),

    setSettings: Effect.fnUntraced(
      function*(conversationId, settings) {
        const json = yield* settingsJson(settings)
        // Empty settings are stored as none, so the id holds only what its log holds.
        if (isEmpty(settings)) {
          yield* statements.deleteSettings(conversationId)
          return emptySettings
        }
        const now = DateTime.toDateUtc(yield* DateTime.now)
        const stored = yield* statements.upsertSettings({ id: conversationId, settings: json, now })
        // An upsert with RETURNING always returns its row.
        if (Option.isNone(stored)) return yield* Effect.dieMessage("setSettings: the upsert returned no row")
        return stored.value.settings
      },
      (effect, conversationId) => Effect.catchTags(effect, settingsErrors("setSettings", conversationId))
    )
  })
