/**
 * The contract of the summary state (`SummaryStore`): compare-and-set commits and their
 * records, the summary message a commit appends and the originals it prunes, and the failures on
 * an unknown conversation.
 */
import { assert, type Vitest } from "@effect/vitest"
import { Array, Effect, Exit } from "effect"
import * as Store from "../../src/layers/store/Store.js"
import type { RepositoryService } from "../../src/services/RepositoryService.js"
import { freshId, newMessage } from "../fixtures/messages.js"

/** The record of a summarization of `fromSeq..toSeq`, as a commit gives it. */
export const record = (fromSeq: number, toSeq: number, summaryTruncated = false) => ({
  fromSeq,
  toSeq,
  summary: `summary of ${fromSeq}..${toSeq}`,
  summaryTruncated,
  mode: "incremental",
  skillId: "test/summarize@1",
  model: null,
  inputTokens: 100,
  outputTokens: 10,
  durationMs: 5
})

/** Registers the summary state's contract in a suite whose layer provides a store. */
export const summaryRepositoryContract = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  it.effect("commitSummary applies on the current state and refuses a stale one", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId()
      yield* store.repository.appendMessages(
        id,
        Array.makeBy(6, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `m${i + 1}`))
      )
      const initial = yield* store.summaries.getSummaryState(id)
      assert.deepStrictEqual([initial.cursor, initial.version, initial.narrative, initial.facts], [0, 0, "", []])
      const first = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 0, version: 0 },
        narrative: "first",
        facts: [{ key: "order", value: "ORD-1", category: "ENTITY", sourceSeqs: [1] }],
        cursor: 2,
        record: record(1, 2)
      })
      assert.strictEqual(first._tag, "Committed")
      if (first._tag === "Committed") {
        assert.deepStrictEqual([first.state.cursor, first.state.version, first.state.narrative], [2, 1, "first"])
        assert.deepStrictEqual([first.record.version, first.record.fromSeq, first.record.toSeq], [1, 1, 2])
      }
      // A writer that read the state before the first commit loses: nothing changes.
      const stale = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 0, version: 0 },
        narrative: "stale",
        facts: [],
        cursor: 4,
        record: record(1, 4)
      })
      assert.strictEqual(stale._tag, "Stale")
      if (stale._tag === "Stale") assert.deepStrictEqual([stale.current.cursor, stale.current.version], [2, 1])
      // A stale version with the current cursor is refused too.
      const staleVersion = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 2, version: 0 },
        narrative: "stale",
        facts: [],
        cursor: 4,
        record: record(3, 4)
      })
      assert.strictEqual(staleVersion._tag, "Stale")
      const state = yield* store.summaries.getSummaryState(id)
      assert.deepStrictEqual([state.cursor, state.version, state.narrative], [2, 1, "first"])
      assert.deepStrictEqual(state.facts, [{ key: "order", value: "ORD-1", category: "ENTITY", sourceSeqs: [1] }])
      assert.strictEqual((yield* store.summaries.listSummarizations(id)).length, 1)
      const second = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 2, version: 1 },
        narrative: "second",
        facts: [],
        cursor: 4,
        record: record(3, 4)
      })
      assert.strictEqual(second._tag, "Committed")
      const records = yield* store.summaries.listSummarizations(id)
      assert.deepStrictEqual(records.map((r) => [r.version, r.fromSeq, r.toSeq, r.summary]), [
        [1, 1, 2, "summary of 1..2"],
        [2, 3, 4, "summary of 3..4"]
      ])
      // Originals are kept when pruning is not asked for.
      assert.strictEqual((yield* store.repository.listMessages(id, {})).length, 6)
    }))

  it.effect("a summarization read before a deletion never commits to the conversation written again", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId()
      const messages = Array.makeBy(4, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `old secret ${i}`))
      yield* store.repository.appendMessages(id, messages)
      const before = yield* store.repository.getConversation(id)
      assert.isAbove(before.incarnation, 0)
      yield* store.repository.appendMessages(id, [newMessage("user", "one more")])
      assert.strictEqual((yield* store.repository.getConversation(id)).incarnation, before.incarnation)
      yield* store.repository.deleteConversation(id)
      yield* store.repository.appendMessages(id, Array.makeBy(4, (i) => newMessage("user", `new ${i}`)))
      const after = yield* store.repository.getConversation(id)
      assert.notStrictEqual(after.incarnation, before.incarnation)
      // The same cursor and version as the stale read: only the incarnation tells them apart.
      const commit = (incarnation: number) =>
        store.summaries.commitSummary({
          conversationId: id,
          expected: { cursor: 0, version: 0, incarnation },
          narrative: "old secret 0 and old secret 2",
          facts: [],
          cursor: 2,
          record: record(1, 2)
        })
      const stale = yield* commit(before.incarnation)
      assert.strictEqual(stale._tag, "Stale")
      const state = yield* store.summaries.getSummaryState(id)
      assert.deepStrictEqual([state.cursor, state.version, state.narrative], [0, 0, ""])
      assert.isEmpty(yield* store.summaries.listSummarizations(id))
      assert.strictEqual((yield* commit(after.incarnation))._tag, "Committed")
    }))

  it.effect("the summaryTruncated flag of a committed record round-trips, true and false", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId()
      yield* store.repository.appendMessages(
        id,
        Array.makeBy(6, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `m${i + 1}`))
      )
      const truncated = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 0, version: 0 },
        narrative: "cut",
        facts: [],
        cursor: 2,
        record: record(1, 2, true)
      })
      assert.strictEqual(truncated._tag, "Committed")
      if (truncated._tag === "Committed") assert.isTrue(truncated.record.summaryTruncated)
      const whole = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 2, version: 1 },
        narrative: "whole",
        facts: [],
        cursor: 4,
        record: record(3, 4, false)
      })
      assert.strictEqual(whole._tag, "Committed")
      if (whole._tag === "Committed") assert.isFalse(whole.record.summaryTruncated)
      const again = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 4, version: 2 },
        narrative: "cut again",
        facts: [],
        cursor: 6,
        record: record(5, 6, true)
      })
      assert.strictEqual(again._tag, "Committed")
      const records = yield* store.summaries.listSummarizations(id)
      assert.deepStrictEqual(records.map((r) => [r.version, r.summaryTruncated]), [
        [1, true],
        [2, false],
        [3, true]
      ])
    }))

  it.effect("commitSummary appends a linked summary message and prunes covered originals when asked", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId()
      yield* store.repository.appendMessages(id, [
        newMessage("system", "sys", {}, 5),
        newMessage("user", "u1", {}, 5),
        newMessage("assistant", "a1", {}, 5),
        newMessage("user", "u2", {}, 5),
        newMessage("assistant", "a2", {}, 5)
      ])
      const result = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 0, version: 0 },
        narrative: "u1 asked, a1 answered",
        facts: [],
        cursor: 3,
        record: record(2, 3),
        summaryMessage: { content: "u1 asked, a1 answered", tokenCount: 9 },
        prune: true
      })
      assert.strictEqual(result._tag, "Committed")
      const stored = yield* store.repository.listMessages(id, {})
      assert.deepStrictEqual(stored.map((m) => [m.seq, m.role]), [
        [1, "system"],
        [4, "user"],
        [5, "assistant"],
        [6, "summary"]
      ])
      assert.deepStrictEqual(stored[3]?.metadata, { summaryMetadataId: 1 })
      const info = yield* store.repository.getConversation(id)
      assert.deepStrictEqual([info.lastSeq, info.messageCount, info.tokenCount], [6, 4, 24])
    }))

  it.effect("a summary message and its record name each other: the record its seq, the message its version", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId()
      yield* store.repository.appendMessages(
        id,
        Array.makeBy(6, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `m${i}`))
      )
      const commit = (expected: { cursor: number; version: number }, cursor: number, withMessage: boolean) =>
        store.summaries.commitSummary({
          conversationId: id,
          expected,
          narrative: `up to ${cursor}`,
          facts: [],
          cursor,
          record: record(expected.cursor + 1, cursor),
          ...(withMessage ? { summaryMessage: { content: `up to ${cursor}`, tokenCount: 4 } } : {})
        })
      const first = yield* commit({ cursor: 0, version: 0 }, 2, true)
      const plain = yield* commit({ cursor: 2, version: 1 }, 4, false)
      yield* store.repository.appendMessages(id, [newMessage("user", "m7")])
      const third = yield* commit({ cursor: 4, version: 2 }, 6, true)
      assert.deepStrictEqual([first._tag, plain._tag, third._tag], ["Committed", "Committed", "Committed"])
      if (first._tag === "Committed") assert.strictEqual(first.record.summaryMessageSeq, 7)
      const records = yield* store.summaries.listSummarizations(id)
      // Seq 7 was the first summary message, 8 the user's, 9 the second summary message.
      assert.deepStrictEqual(records.map((r) => [r.version, r.summaryMessageSeq]), [[1, 7], [2, null], [3, 9]])
      // From each record to its message, and back by the message's metadata.
      for (const r of records) {
        if (r.summaryMessageSeq === null) continue
        const [message] = yield* store.repository.listMessages(id, {
          after: r.summaryMessageSeq - 1,
          before: r.summaryMessageSeq + 1
        })
        assert.deepStrictEqual([message?.role, message?.content], ["summary", `up to ${r.toSeq}`])
        assert.strictEqual(records.find((x) => x.version === message?.metadata.summaryMetadataId), r)
      }
      const summaries = (yield* store.repository.listMessages(id, {})).filter((m) => m.role === "summary")
      assert.deepStrictEqual(
        summaries.map((m) => records.find((r) => r.version === m.metadata.summaryMetadataId)?.summaryMessageSeq),
        summaries.map((m) => m.seq)
      )
    }))

  it.effect("summary operations on an unknown conversation fail with ConversationNotFoundError", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("unknown")
      const attempts: ReadonlyArray<Effect.Effect<unknown, RepositoryService.Errors>> = [
        store.summaries.getSummaryState(id),
        store.summaries.listSummarizations(id),
        store.summaries.commitSummary({
          conversationId: id,
          expected: { cursor: 0, version: 0 },
          narrative: "n",
          facts: [],
          cursor: 0,
          record: record(1, 1)
        })
      ]
      for (const attempt of attempts) {
        const exit = yield* Effect.exit(attempt)
        assert.isTrue(Exit.isFailure(exit))
        const error = yield* Effect.flip(attempt)
        assert.strictEqual(error._tag, "ConversationNotFoundError")
        if (error._tag === "ConversationNotFoundError") assert.strictEqual(error.conversationId, id)
      }
      // A commit on an unknown conversation must not create it.
      assert.strictEqual((yield* Effect.flip(store.repository.getConversation(id)))._tag, "ConversationNotFoundError")
    }))
}
