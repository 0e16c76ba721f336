/**
 * The contract of per-conversation settings (`SettingsStore`): defaults, replacement,
 * isolation, settings stored before the first message, and their removal with the conversation.
 */
import { assert, type Vitest } from "@effect/vitest"
import { DateTime, Effect } from "effect"
import * as ConversationSettings from "../../src/domain/ConversationSettings.js"
import { empty as emptySettings, isEmpty } from "../../src/domain/internal/conversationSettings.js"
import * as Store from "../../src/layers/store/Store.js"
import { SettingsStore } from "../../src/services/SettingsStore.js"
import { freshId, newMessage } from "../fixtures/messages.js"

/** The fields a settings value holds, as a plain object: absent fields stay absent. */
const fieldsOf = (settings: ConversationSettings.ConversationSettings) => ({ ...settings })

const settings = (fields: ConstructorParameters<typeof ConversationSettings.ConversationSettings>[0]) =>
  new ConversationSettings.ConversationSettings(fields)

/** Registers the settings tests in a contract suite. */
export const settingsContract = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  it.effect("settings default to empty, with or without messages", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const unknown = freshId("settings")
      const stored = freshId("settings")
      yield* store.repository.appendMessages(stored, [newMessage("user", "hello")])
      for (const id of [unknown, stored]) {
        const read = yield* store.settings.getSettings(id)
        assert.instanceOf(read, ConversationSettings.ConversationSettings)
        assert.deepStrictEqual(fieldsOf(read), {})
        assert.isTrue(isEmpty(read))
      }
      // Reading settings does not create the conversation.
      assert.strictEqual(
        (yield* Effect.flip(store.repository.getConversation(unknown)))._tag,
        "ConversationNotFoundError"
      )
    }))

  it.effect("setSettings returns what is stored and getSettings reads it back", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("settings")
      yield* store.repository.appendMessages(id, [newMessage("user", "hello")])
      const returned = yield* store.settings.setSettings(
        id,
        settings({ tokenBudget: 2000, kRawTurns: 5, view: "stable" })
      )
      assert.instanceOf(returned, ConversationSettings.ConversationSettings)
      assert.deepStrictEqual(fieldsOf(returned), { tokenBudget: 2000, kRawTurns: 5, view: "stable" })
      const read = yield* store.settings.getSettings(id)
      assert.instanceOf(read, ConversationSettings.ConversationSettings)
      assert.deepStrictEqual(fieldsOf(read), { tokenBudget: 2000, kRawTurns: 5, view: "stable" })
      // The bounds of the schema are stored as they are.
      yield* store.settings.setSettings(id, settings({ tokenBudget: 1, kRawTurns: 1000, view: "full" }))
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(id)), {
        tokenBudget: 1,
        kRawTurns: 1000,
        view: "full"
      })
    }))

  it.effect("setSettings replaces the whole set: an absent field is cleared", () =>
    Effect.gen(function*() {
      const repo = yield* SettingsStore
      const id = freshId("settings")
      yield* repo.setSettings(id, settings({ tokenBudget: 2000, view: "stable" }))
      const replaced = yield* repo.setSettings(id, settings({ kRawTurns: 4 }))
      assert.deepStrictEqual(fieldsOf(replaced), { kRawTurns: 4 })
      assert.deepStrictEqual(fieldsOf(yield* repo.getSettings(id)), { kRawTurns: 4 })
      const cleared = yield* repo.setSettings(id, emptySettings)
      assert.deepStrictEqual(fieldsOf(cleared), {})
      assert.deepStrictEqual(fieldsOf(yield* repo.getSettings(id)), {})
      const again = yield* repo.setSettings(id, settings({ view: "full" }))
      assert.deepStrictEqual(fieldsOf(again), { view: "full" })
      assert.deepStrictEqual(fieldsOf(yield* repo.getSettings(id)), { view: "full" })
    }))

  it.effect("updateSettings is atomic: concurrent updates of one id lose none, and empty settings store none", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("update")
      // 40 updates at once, each adding one prompt to what it reads: all 40 are kept.
      yield* Effect.forEach(
        Array.from({ length: 40 }, (_, i) => i),
        (i) =>
          store.settings.updateSettings(id, (current) =>
            settings({
              ...current,
              systemPrompts: [...(current.systemPrompts ?? []), {
                text: `prompt ${i}`,
                since: DateTime.unsafeMake(Date.UTC(2026, 0, 1, 0, i)),
                tokenCount: 3
              }]
            })),
        { concurrency: "unbounded", discard: true }
      )
      const texts = ((yield* store.settings.getSettings(id)).systemPrompts ?? []).map((p) => p.text)
      assert.sameMembers(texts, Array.from({ length: 40 }, (_, i) => `prompt ${i}`))
      const kept = yield* store.settings.updateSettings(id, (current) => settings({ ...current, tokenBudget: 900 }))
      assert.deepStrictEqual([kept.tokenBudget, kept.systemPrompts?.length], [900, 40])
      assert.isTrue(isEmpty(yield* store.settings.updateSettings(id, () => emptySettings)))
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(id)), {})
      // An id that holds nothing is not found by a delete.
      assert.strictEqual(
        (yield* Effect.flip(store.repository.deleteConversation(id)))._tag,
        "ConversationNotFoundError"
      )
    }))

  it.effect("the settings of one conversation are never visible from another", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const first = freshId("settings")
      const second = freshId("settings")
      const bare = freshId("settings")
      yield* store.repository.appendMessages(first, [newMessage("user", "first")])
      yield* store.repository.appendMessages(second, [newMessage("user", "second")])
      yield* store.settings.setSettings(first, settings({ tokenBudget: 1500, view: "stable" }))
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(second)), {})
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(bare)), {})
      yield* store.settings.setSettings(second, settings({ kRawTurns: 7 }))
      yield* store.settings.setSettings(bare, settings({ tokenBudget: 900 }))
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(first)), { tokenBudget: 1500, view: "stable" })
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(second)), { kRawTurns: 7 })
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(bare)), { tokenBudget: 900 })
      // Deleting one conversation leaves the others' settings alone.
      yield* store.repository.deleteConversation(second)
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(first)), { tokenBudget: 1500, view: "stable" })
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(bare)), { tokenBudget: 900 })
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(second)), {})
    }))

  it.effect("settings set before the first message survive the first append and later writes", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("settings")
      yield* store.settings.setSettings(id, settings({ tokenBudget: 4000, kRawTurns: 2 }))
      // Setting settings does not create the conversation.
      assert.strictEqual((yield* Effect.flip(store.repository.getConversation(id)))._tag, "ConversationNotFoundError")
      const appended = yield* store.repository.appendMessages(id, [
        newMessage("user", "u1"),
        newMessage("assistant", "a1")
      ])
      assert.deepStrictEqual(appended.messages.map((m) => m.seq), [1, 2])
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(id)), { tokenBudget: 4000, kRawTurns: 2 })
      const committed = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 0, version: 0 },
        narrative: "u1 asked",
        facts: [],
        cursor: 2,
        record: {
          fromSeq: 1,
          toSeq: 2,
          summary: "u1 asked",
          summaryTruncated: false,
          mode: "incremental",
          skillId: "test/summarize@1",
          model: null,
          inputTokens: 4,
          outputTokens: 2,
          durationMs: 1
        },
        summaryMessage: { content: "u1 asked", tokenCount: 3 },
        prune: true
      })
      assert.strictEqual(committed._tag, "Committed")
      yield* store.repository.appendMessages(id, [newMessage("user", "u2")])
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(id)), { tokenBudget: 4000, kRawTurns: 2 })
    }))

  it.effect("deleteConversation removes the settings with the messages", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("settings")
      yield* store.repository.appendMessages(id, [newMessage("user", "u1"), newMessage("assistant", "a1")])
      yield* store.settings.setSettings(id, settings({ tokenBudget: 2500, kRawTurns: 3, view: "stable" }))
      yield* store.repository.deleteConversation(id)
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(id)), {})
      assert.strictEqual((yield* Effect.flip(store.repository.listMessages(id, {})))._tag, "ConversationNotFoundError")
      assert.strictEqual((yield* Effect.flip(store.repository.getConversation(id)))._tag, "ConversationNotFoundError")
      // The id starts afresh: new messages, no settings.
      const again = yield* store.repository.appendMessages(id, [newMessage("user", "fresh")])
      assert.deepStrictEqual(again.messages.map((m) => m.seq), [1])
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(id)), {})
    }))

  it.effect("deleteConversation of an id with settings only clears them and succeeds; then the id holds nothing", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("settings")
      yield* store.settings.setSettings(id, settings({ view: "stable" }))
      yield* store.repository.deleteConversation(id)
      assert.deepStrictEqual(fieldsOf(yield* store.settings.getSettings(id)), {})
      const second = yield* Effect.flip(store.repository.deleteConversation(id))
      assert.strictEqual(second._tag, "ConversationNotFoundError")
      // The empty settings are stored as none: such an id holds nothing to delete.
      const emptied = freshId("settings")
      yield* store.settings.setSettings(emptied, settings({ kRawTurns: 9 }))
      yield* store.settings.setSettings(emptied, emptySettings)
      assert.strictEqual(
        (yield* Effect.flip(store.repository.deleteConversation(emptied)))._tag,
        "ConversationNotFoundError"
      )
      const never = freshId("settings")
      yield* store.settings.setSettings(never, emptySettings)
      assert.strictEqual(
        (yield* Effect.flip(store.repository.deleteConversation(never)))._tag,
        "ConversationNotFoundError"
      )
    }))
}
