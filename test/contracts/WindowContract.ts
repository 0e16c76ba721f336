/**
 * The part of the log's contract the context is assembled from: window reads (what a caller may
 * rely on, also when the newest messages are small, and the stored settings they carry), the first
 * turn's role and the layered summary state.
 */
import { assert, type Vitest } from "@effect/vitest"
import { Array, Effect } from "effect"
import { ConversationSettings } from "../../src/domain/ConversationSettings.js"
import { windowPageSize } from "../../src/layers/store/internal/window.js"
import * as Store from "../../src/layers/store/Store.js"
import { RepositoryService } from "../../src/services/RepositoryService.js"
import { freshId, newMessage } from "../fixtures/messages.js"

const seqsOf = (messages: ReadonlyArray<{ readonly seq: number }>) => messages.map((m) => m.seq)

const record = (fromSeq: number, toSeq: number) => ({
  fromSeq,
  toSeq,
  summary: `layer ${fromSeq}..${toSeq}`,
  mode: "layered",
  skillId: "test/summarize@1",
  model: null,
  inputTokens: 10,
  outputTokens: 2,
  durationMs: 1,
  summaryTruncated: false
})

/** Registers the window tests in a contract suite. */
export const windowContract = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  it.effect("readWindow returns the system prefix, the state and the newest messages after the start", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const id = freshId()
      yield* repo.appendMessages(id, [
        newMessage("system", "rules", {}, 3),
        newMessage("system", "more rules", {}, 3),
        ...Array.makeBy(200, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `m${i + 3}`, {}, 10))
      ])
      const read = yield* repo.readWindow(id, { after: "system-prefix", tokenLimit: 100 })
      assert.deepStrictEqual(seqsOf(read.system), [1, 2])
      assert.strictEqual(read.after, 2)
      assert.strictEqual(read.info.lastSeq, 202)
      assert.strictEqual(read.state.cursor, 0)
      // The newest messages, returned oldest first, ending at the last: enough of them to hold the
      // token limit (the in-memory store reads that much, the SQL stores a page of `windowPageSize`,
      // the stores' own arithmetic), so that a context of that budget needs no second read, and not
      // the whole history.
      assert.isAbove(read.recent.reduce((sum, m) => sum + m.tokenCount, 0), 100)
      assert.isAtMost(read.recent.length, windowPageSize(read.info, 100))
      assert.deepStrictEqual(seqsOf(read.recent), Array.range(203 - read.recent.length, 202))
      assert.isFalse(read.reachedStart)
      const whole = yield* repo.readWindow(id, { after: "system-prefix", tokenLimit: 100_000 })
      assert.deepStrictEqual(seqsOf(whole.recent), Array.range(3, 202))
      assert.isTrue(whole.reachedStart)
    }))

  it.effect("readWindow holds the token limit back to a user message, also when the newest messages are small", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const id = freshId()
      // Large old messages and small new ones: a page sized by the mean message holds too little.
      yield* repo.appendMessages(id, [
        newMessage("system", "rules", {}, 3),
        ...Array.makeBy(300, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `old ${i}`, {}, 1000)),
        ...Array.makeBy(100, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `new ${i}`, {}, 1))
      ])
      for (const tokenLimit of [0, 50, 500, 5000]) {
        const read = yield* repo.readWindow(id, { after: "system-prefix", tokenLimit })
        assert.isFalse(read.reachedStart)
        assert.deepStrictEqual(seqsOf(read.recent), Array.range(402 - read.recent.length, 401))
        assert.isAbove(read.recent.reduce((sum, m) => sum + m.tokenCount, 0), tokenLimit)
        assert.strictEqual(read.recent[0]?.role, "user")
      }
      const whole = yield* repo.readWindow(id, { after: "system-prefix", tokenLimit: 400_000 })
      assert.isTrue(whole.reachedStart)
      assert.deepStrictEqual(seqsOf(whole.recent), Array.range(2, 401))
    }))

  it.effect("readWindow after the cursor starts past the summarized messages", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId()
      yield* store.repository.appendMessages(id, [
        newMessage("system", "rules", {}, 3),
        ...Array.makeBy(10, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `m${i + 2}`, {}, 4))
      ])
      yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 0, version: 0 },
        narrative: "older part",
        facts: [],
        layers: [{ fromSeq: 2, toSeq: 7, text: "layer one", tokenCount: 3 }],
        cursor: 7,
        record: record(2, 7)
      })
      const read = yield* store.repository.readWindow(id, { after: "cursor", tokenLimit: 1000 })
      assert.strictEqual(read.after, 7)
      assert.deepStrictEqual(seqsOf(read.recent), [8, 9, 10, 11])
      assert.deepStrictEqual(seqsOf(read.system), [1])
      assert.isTrue(read.reachedStart)
      assert.deepStrictEqual(read.state.layers, [{ fromSeq: 2, toSeq: 7, text: "layer one", tokenCount: 3 }])
      assert.strictEqual(read.state.narrative, "older part")
      const fromPrefix = yield* store.repository.readWindow(id, { after: "system-prefix", tokenLimit: 1000 })
      assert.strictEqual(fromPrefix.after, 1)
      assert.strictEqual(fromPrefix.recent.length, 10)
    }))

  it.effect("readWindow returns the conversation's stored settings, as they are after each write", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId()
      yield* store.repository.appendMessages(id, [newMessage("user", "hello"), newMessage("assistant", "hi")])
      const read = () => store.repository.readWindow(id, { after: "system-prefix", tokenLimit: 100 })
      assert.deepStrictEqual({ ...(yield* read()).settings }, {})
      const stored = yield* store.settings.setSettings(
        id,
        new ConversationSettings({ tokenBudget: 1200, kRawTurns: 4, view: "stable", strategy: "hierarchical" })
      )
      assert.deepStrictEqual({ ...(yield* read()).settings }, { ...stored })
      yield* store.settings.setSettings(id, new ConversationSettings({ view: "full" }))
      assert.deepStrictEqual({ ...(yield* read()).settings }, { view: "full" })
      yield* store.settings.setSettings(id, new ConversationSettings({}))
      assert.deepStrictEqual({ ...(yield* read()).settings }, {})
    }))

  it.effect("the first turn's role is the first message after the leading system messages", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const id = freshId()
      yield* repo.appendMessages(id, [newMessage("system", "rules")])
      assert.isNull((yield* repo.getConversation(id)).firstTurnRole)
      yield* repo.appendMessages(id, [newMessage("assistant", "Hi! How can I help?"), newMessage("user", "hello")])
      assert.strictEqual((yield* repo.getConversation(id)).firstTurnRole, "assistant")
      const other = freshId()
      yield* repo.appendMessages(other, [newMessage("user", "hello"), newMessage("system", "late")])
      const info = yield* repo.getConversation(other)
      assert.deepStrictEqual([info.firstTurnRole, info.systemPrefixSeq], ["user", 0])
    }))
}
