/**
 * The SQL store's settings (`SettingsStore`): one JSON row per conversation, apart from its log, so
 * an id may hold settings before its first message.
 */
import type { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option, Schema } from "effect"
import type { ConversationId } from "../../../../domain/ConversationId.js"
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
export const make = (sql: SqlClient.SqlClient, statements: Statements): SettingsStore.Service => {
  /** Stores `settings`: empty ones as none, so the id holds only what its log holds. */
  const store = (conversationId: ConversationId, settings: ConversationSettings.ConversationSettings) =>
    Effect.gen(function*() {
      const json = yield* settingsJson(settings)
      if (isEmpty(settings)) {
        yield* statements.deleteSettings(conversationId)
        return emptySettings
      }
      const now = DateTime.toDateUtc(yield* DateTime.now)
      const stored = yield* statements.upsertSettings({ id: conversationId, settings: json, now })
      // An upsert with RETURNING always returns its row.
      if (Option.isNone(stored)) return yield* Effect.dieMessage("setSettings: the upsert returned no row")
      return stored.value.settings
    })

  return SettingsStore.of({
    getSettings: Effect.fnUntraced(
      function*(conversationId) {
        const row = yield* statements.selectSettings(conversationId)
        return Option.match(row, { onNone: () => emptySettings, onSome: (r) => r.settings })
      },
      (effect, conversationId) => Effect.catchTags(effect, settingsErrors("getSettings", conversationId))
    ),

    setSettings: (conversationId, settings) =>
      Effect.catchTags(store(conversationId, settings), settingsErrors("setSettings", conversationId)),

    // The id's row is locked for the transaction, made first if there is none, so concurrent
    // updates of one id run one after another.
    updateSettings: Effect.fnUntraced(
      function*(conversationId, f) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          const current = yield* statements.lockSettings(conversationId)
          return yield* store(conversationId, f(Option.getOrElse(current, () => emptySettings)))
        }))
      },
      (effect, conversationId) => Effect.catchTags(effect, settingsErrors("updateSettings", conversationId))
    )
  })
}
