/**
 * The in-memory store's settings (`SettingsStore`), handed out as copies. They sit beside the
 * conversations, so an id may hold settings before its first message.
 */
import { Effect, Either, HashMap, Option, type ParseResult, Ref, Schema } from "effect"
import type { ConversationId } from "../../../../domain/ConversationId.js"
import * as ConversationSettings from "../../../../domain/ConversationSettings.js"
import { empty as emptySettings, isEmpty } from "../../../../domain/internal/conversationSettings.js"
import { SettingsStore } from "../../../../services/SettingsStore.js"
import type { Snapshot, State } from "./state.js"

/** Settings as a reader gets them: a fresh copy, as for messages. */
const copySettings = (settings: ConversationSettings.ConversationSettings): ConversationSettings.ConversationSettings =>
  new ConversationSettings.ConversationSettings({ ...settings }, { disableValidation: true })

/**
 * Settings as stored: encoded and decoded again, so only the schema's fields are kept, as in SQL.
 */
const storable = (settings: ConversationSettings.ConversationSettings) =>
  Either.flatMap(
    Schema.encodeEither(ConversationSettings.ConversationSettings)(settings),
    Schema.decodeEither(ConversationSettings.ConversationSettings)
  )

/** The settings over the store's data. */
export const make = (state: State): SettingsStore.Service =>
  SettingsStore.of({
    getSettings: Effect.fnUntraced(function*(conversationId) {
      const { settings } = yield* Ref.get(state.ref)
      return Option.match(HashMap.get(settings, conversationId), {
        onNone: () => emptySettings,
        onSome: copySettings
      })
    }),

    setSettings: (conversationId, settings) => update(state, conversationId, () => settings),
    updateSettings: (conversationId, f) => update(state, conversationId, f)
  })

/** Stores `f` of the current settings in one update of the store. */
const update = (
  { ref }: State,
  conversationId: ConversationId,
  f: (current: ConversationSettings.ConversationSettings) => ConversationSettings.ConversationSettings
) =>
  Effect.gen(function*() {
    // The schema's round trip is pure, so it runs inside the update: nothing lands between the read and the write.
    const stored = yield* Ref.modify(ref, (
      snapshot
    ): readonly [Either.Either<ConversationSettings.ConversationSettings, ParseResult.ParseError>, Snapshot] => {
      const current = Option.getOrElse(HashMap.get(snapshot.settings, conversationId), () => emptySettings)
      const next = storable(f(current))
      if (Either.isLeft(next)) return [next, snapshot]
      // Empty settings are stored as none: the id holds only its log.
      return [next, {
        ...snapshot,
        settings: isEmpty(next.right)
          ? HashMap.remove(snapshot.settings, conversationId)
          : HashMap.set(snapshot.settings, conversationId, next.right)
      }]
    })
    if (Either.isLeft(stored)) {
      // The class validates on construction: anything else came past the type system.
      return yield* Effect.dieMessage(`setSettings: invalid settings: ${stored.left.message}`)
    }
    return copySettings(stored.right)
  })
