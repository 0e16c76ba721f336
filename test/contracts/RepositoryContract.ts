/**
 * The repository contract: one suite every `RepositoryService` implementation must pass.
 */
import { assert, layer } from "@effect/vitest"
import { Array, Deferred, Effect, Exit, Fiber, type Layer, Option } from "effect"
import { RepositoryService } from "../../src/services/RepositoryService.js"
import { freshId, newMessage } from "../fixtures/messages.js"
import { conversationIdContract } from "./ConversationIdContract.js"
import { embeddingContract } from "./EmbeddingContract.js"
import { jsonContract } from "./JsonContract.js"
import { searchContract } from "./SearchContract.js"
import { settingsContract } from "./SettingsContract.js"
import { windowContract } from "./WindowContract.js"

const record = (fromSeq: number, toSeq: number, summaryTruncated = false) => ({
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

const seqsOf = (messages: ReadonlyArray<{ readonly seq: number }>) => messages.map((m) => m.seq)

/**
 * Runs the contract against `repositoryLayer`. The layer is built once for the suite; every test
 * uses its own conversation ids.
 */
export const repositoryContract = <E>(name: string, repositoryLayer: Layer.Layer<RepositoryService, E>) =>
  layer(repositoryLayer)(`RepositoryService contract: ${name}`, (it) => {
    it.effect("append assigns seqs 1..n in order and keeps the counters", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId()
        const first = yield* repo.appendMessages(id, [
          newMessage("system", "You are helpful.", {}, 7),
          newMessage("system", "Answer briefly.", {}, 6),
          newMessage("user", "hello", {}, 5)
        ])
        assert.deepStrictEqual(seqsOf(first.messages), [1, 2, 3])
        assert.strictEqual(first.messageCount, 3)
        const second = yield* repo.appendMessages(id, [newMessage("system", "late system", {}, 3)])
        assert.deepStrictEqual(seqsOf(second.messages), [4])
        const info = yield* repo.getConversation(id)
        assert.strictEqual(info.lastSeq, 4)
        assert.strictEqual(info.messageCount, 4)
        assert.strictEqual(info.tokenCount, 21)
        // Only the system messages before the first other message are the leading ones.
        assert.strictEqual(info.systemPrefixSeq, 2)
        const all = yield* repo.listMessages(id, {})
        assert.deepStrictEqual(all.map((m) => [m.seq, m.role, m.content, m.tokenCount]), [
          [1, "system", "You are helpful.", 7],
          [2, "system", "Answer briefly.", 6],
          [3, "user", "hello", 5],
          [4, "system", "late system", 3]
        ])
        assert.isTrue(all.every((m) => m.conversationId === id))
      }))

    it.effect("an empty append stores nothing and creates no conversation", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId()
        const result = yield* repo.appendMessages(id, [])
        assert.deepStrictEqual(result, { messages: [], messageCount: 0 })
        const error = yield* Effect.flip(repo.getConversation(id))
        assert.strictEqual(error._tag, "ConversationNotFoundError")
      }))

    it.effect("100 concurrent appends on one conversation: seqs 1..N, no gap, no duplicate, nothing lost", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId("concurrent")
        const batches = Array.makeBy(
          100,
          (i) =>
            Array.makeBy(1 + (i % 3), (j) => newMessage(j === 0 ? "user" : "assistant", `writer ${i} message ${j}`))
        )
        const results = yield* Effect.forEach(batches, (batch) => repo.appendMessages(id, batch), {
          concurrency: "unbounded"
        })
        const total = batches.reduce((n, batch) => n + batch.length, 0)
        // Each batch got consecutive seqs, in its own order.
        for (const [result, batch] of Array.zip(results, batches)) {
          const seqs = seqsOf(result.messages)
          const start = seqs[0] ?? 0
          assert.deepStrictEqual(seqs, Array.makeBy(seqs.length, (k) => start + k))
          assert.deepStrictEqual(result.messages.map((m) => m.content), batch.map((m) => m.content))
        }
        const stored = yield* repo.listMessages(id, {})
        assert.deepStrictEqual(seqsOf(stored), Array.makeBy(total, (k) => k + 1))
        const expected = batches.flat().map((m) => m.content).sort()
        assert.deepStrictEqual(stored.map((m) => m.content).sort(), expected)
        assert.strictEqual((yield* repo.getConversation(id)).messageCount, total)
      }))

    it.effect("listMessages pages by limit, before and after, always oldest first", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId()
        yield* repo.appendMessages(
          id,
          Array.makeBy(10, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `m${i + 1}`))
        )
        assert.deepStrictEqual(seqsOf(yield* repo.listMessages(id, { limit: 3, from: "newest" })), [8, 9, 10])
        assert.deepStrictEqual(seqsOf(yield* repo.listMessages(id, { limit: 3, before: 8, from: "newest" })), [5, 6, 7])
        assert.deepStrictEqual(seqsOf(yield* repo.listMessages(id, { limit: 3, before: 3, from: "newest" })), [1, 2])
        assert.deepStrictEqual(seqsOf(yield* repo.listMessages(id, { limit: 3 })), [1, 2, 3])
        assert.deepStrictEqual(seqsOf(yield* repo.listMessages(id, { after: 7 })), [8, 9, 10])
        assert.deepStrictEqual(seqsOf(yield* repo.listMessages(id, { after: 2, before: 6 })), [3, 4, 5])
        assert.deepStrictEqual(seqsOf(yield* repo.listMessages(id, { after: 2, limit: 2 })), [3, 4])
        assert.deepStrictEqual(seqsOf(yield* repo.listMessages(id, { after: 10 })), [])
        assert.deepStrictEqual(seqsOf(yield* repo.listMessages(id, { before: 1 })), [])
        assert.deepStrictEqual(seqsOf(yield* repo.listMessages(id, { before: 100, limit: 2, from: "newest" })), [9, 10])
        // Paging backwards with `before` visits every message exactly once.
        const visited: Array<number> = []
        let before: number | undefined = undefined
        while (true) {
          const page: ReadonlyArray<{ readonly seq: number }> = yield* repo.listMessages(id, {
            before,
            limit: 4,
            from: "newest"
          })
          const oldest = page[0]
          if (oldest === undefined) break
          visited.unshift(...seqsOf(page))
          before = oldest.seq
        }
        assert.deepStrictEqual(visited, Array.makeBy(10, (k) => k + 1))
      }))

    it.effect("countMessages counts a range by role", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId()
        yield* repo.appendMessages(id, [
          newMessage("system", "s"),
          newMessage("user", "u1"),
          newMessage("assistant", "a1", { toolCalls: [{ id: "c1", name: "lookup", params: { q: 1 } }] }),
          newMessage("tool", "{\"ok\":true}", { toolCallId: "c1", toolName: "lookup" }),
          newMessage("assistant", "a2"),
          newMessage("user", "u2")
        ])
        assert.deepStrictEqual(yield* repo.countMessages(id, {}), {
          total: 6,
          tokenCount: 32,
          system: 1,
          user: 2,
          assistant: 2,
          tool: 1,
          summary: 0
        })
        assert.deepStrictEqual(yield* repo.countMessages(id, { after: 1, before: 5 }), {
          total: 3,
          tokenCount: 17,
          system: 0,
          user: 1,
          assistant: 1,
          tool: 1,
          summary: 0
        })
      }))

    it.effect("messages round-trip content and metadata exactly", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId()
        const contents = [
          "Robert'); DROP TABLE messages;--",
          "emoji 🧊❄️👩🏽‍🔧 and RTL: שלום עולם مرحبا",
          "\u0001\u0002\u007f binary-looking \uffff text\n\t\r",
          "$1 $2 ? :name %s ${x} \\N \\\\"
        ]
        const metadata = {
          modelVariant: "deep-dive",
          attributes: { nested: { list: [1, "two", null, true], quote: "it's \"quoted\"" } }
        }
        yield* repo.appendMessages(id, contents.map((content) => newMessage("user", content, metadata)))
        const stored = yield* repo.listMessages(id, {})
        assert.deepStrictEqual(stored.map((m) => m.content), contents)
        for (const m of stored) assert.deepStrictEqual(m.metadata, metadata)
      }))

    it.effect("deleteConversation removes messages, summary state and records together", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId()
        const other = freshId()
        yield* repo.appendMessages(id, [
          newMessage("user", "u1"),
          newMessage("assistant", "a1"),
          newMessage("user", "u2")
        ])
        yield* repo.appendMessages(other, [newMessage("user", "other")])
        const commit = yield* repo.commitSummary({
          conversationId: id,
          expected: { cursor: 0, version: 0 },
          narrative: "n",
          facts: [],
          cursor: 2,
          record: record(1, 2)
        })
        assert.strictEqual(commit._tag, "Committed")
        yield* repo.deleteConversation(id)
        const attempts: ReadonlyArray<Effect.Effect<unknown, RepositoryService.Errors>> = [
          repo.getConversation(id),
          repo.listMessages(id, {}),
          repo.countMessages(id, {}),
          repo.getSummaryState(id),
          repo.listSummarizations(id)
        ]
        for (const attempt of attempts) {
          const error = yield* Effect.flip(attempt)
          assert.strictEqual(error._tag, "ConversationNotFoundError")
        }
        // Other conversations are untouched; a new append starts the id afresh.
        assert.strictEqual((yield* repo.listMessages(other, {})).length, 1)
        const again = yield* repo.appendMessages(id, [newMessage("user", "fresh")])
        assert.deepStrictEqual(seqsOf(again.messages), [1])
        const state = yield* repo.getSummaryState(id)
        assert.deepStrictEqual([state.cursor, state.version, state.narrative], [0, 0, ""])
        assert.strictEqual((yield* repo.listSummarizations(id)).length, 0)
      }))

    it.effect("commitSummary applies on the current state and refuses a stale one", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId()
        yield* repo.appendMessages(
          id,
          Array.makeBy(6, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `m${i + 1}`))
        )
        const initial = yield* repo.getSummaryState(id)
        assert.deepStrictEqual([initial.cursor, initial.version, initial.narrative, initial.facts], [0, 0, "", []])
        const first = yield* repo.commitSummary({
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
        const stale = yield* repo.commitSummary({
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
        const staleVersion = yield* repo.commitSummary({
          conversationId: id,
          expected: { cursor: 2, version: 0 },
          narrative: "stale",
          facts: [],
          cursor: 4,
          record: record(3, 4)
        })
        assert.strictEqual(staleVersion._tag, "Stale")
        const state = yield* repo.getSummaryState(id)
        assert.deepStrictEqual([state.cursor, state.version, state.narrative], [2, 1, "first"])
        assert.deepStrictEqual(state.facts, [{ key: "order", value: "ORD-1", category: "ENTITY", sourceSeqs: [1] }])
        assert.strictEqual((yield* repo.listSummarizations(id)).length, 1)
        const second = yield* repo.commitSummary({
          conversationId: id,
          expected: { cursor: 2, version: 1 },
          narrative: "second",
          facts: [],
          cursor: 4,
          record: record(3, 4)
        })
        assert.strictEqual(second._tag, "Committed")
        const records = yield* repo.listSummarizations(id)
        assert.deepStrictEqual(records.map((r) => [r.version, r.fromSeq, r.toSeq, r.summary]), [
          [1, 1, 2, "summary of 1..2"],
          [2, 3, 4, "summary of 3..4"]
        ])
        // Originals are kept when pruning is not asked for.
        assert.strictEqual((yield* repo.listMessages(id, {})).length, 6)
      }))

    it.effect("the summaryTruncated flag of a committed record round-trips, true and false", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId()
        yield* repo.appendMessages(
          id,
          Array.makeBy(6, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `m${i + 1}`))
        )
        const truncated = yield* repo.commitSummary({
          conversationId: id,
          expected: { cursor: 0, version: 0 },
          narrative: "cut",
          facts: [],
          cursor: 2,
          record: record(1, 2, true)
        })
        assert.strictEqual(truncated._tag, "Committed")
        if (truncated._tag === "Committed") assert.isTrue(truncated.record.summaryTruncated)
        const whole = yield* repo.commitSummary({
          conversationId: id,
          expected: { cursor: 2, version: 1 },
          narrative: "whole",
          facts: [],
          cursor: 4,
          record: record(3, 4, false)
        })
        assert.strictEqual(whole._tag, "Committed")
        if (whole._tag === "Committed") assert.isFalse(whole.record.summaryTruncated)
        const again = yield* repo.commitSummary({
          conversationId: id,
          expected: { cursor: 4, version: 2 },
          narrative: "cut again",
          facts: [],
          cursor: 6,
          record: record(5, 6, true)
        })
        assert.strictEqual(again._tag, "Committed")
        const records = yield* repo.listSummarizations(id)
        assert.deepStrictEqual(records.map((r) => [r.version, r.summaryTruncated]), [
          [1, true],
          [2, false],
          [3, true]
        ])
      }))

    it.effect("commitSummary appends a linked summary message and prunes covered originals when asked", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId()
        yield* repo.appendMessages(id, [
          newMessage("system", "sys", {}, 5),
          newMessage("user", "u1", {}, 5),
          newMessage("assistant", "a1", {}, 5),
          newMessage("user", "u2", {}, 5),
          newMessage("assistant", "a2", {}, 5)
        ])
        const result = yield* repo.commitSummary({
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
        const stored = yield* repo.listMessages(id, {})
        assert.deepStrictEqual(stored.map((m) => [m.seq, m.role]), [
          [1, "system"],
          [4, "user"],
          [5, "assistant"],
          [6, "summary"]
        ])
        assert.deepStrictEqual(stored[3]?.metadata, { summaryMetadataId: 1 })
        const info = yield* repo.getConversation(id)
        assert.deepStrictEqual([info.lastSeq, info.messageCount, info.tokenCount], [6, 4, 24])
      }))

    it.effect("a summary message and its record name each other: the record its seq, the message its version", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId()
        yield* repo.appendMessages(id, Array.makeBy(6, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `m${i}`)))
        const commit = (expected: { cursor: number; version: number }, cursor: number, withMessage: boolean) =>
          repo.commitSummary({
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
        yield* repo.appendMessages(id, [newMessage("user", "m7")])
        const third = yield* commit({ cursor: 4, version: 2 }, 6, true)
        assert.deepStrictEqual([first._tag, plain._tag, third._tag], ["Committed", "Committed", "Committed"])
        if (first._tag === "Committed") assert.strictEqual(first.record.summaryMessageSeq, 7)
        const records = yield* repo.listSummarizations(id)
        // Seq 7 was the first summary message, 8 the user's, 9 the second summary message.
        assert.deepStrictEqual(records.map((r) => [r.version, r.summaryMessageSeq]), [[1, 7], [2, null], [3, 9]])
        // From each record to its message, and back by the message's metadata.
        for (const r of records) {
          if (r.summaryMessageSeq === null) continue
          const [message] = yield* repo.listMessages(id, {
            after: r.summaryMessageSeq - 1,
            before: r.summaryMessageSeq + 1
          })
          assert.deepStrictEqual([message?.role, message?.content], ["summary", `up to ${r.toSeq}`])
          assert.strictEqual(records.find((x) => x.version === message?.metadata.summaryMetadataId), r)
        }
        const summaries = (yield* repo.listMessages(id, {})).filter((m) => m.role === "summary")
        assert.deepStrictEqual(
          summaries.map((m) => records.find((r) => r.version === m.metadata.summaryMetadataId)?.summaryMessageSeq),
          summaries.map((m) => m.seq)
        )
      }))

    it.effect("operations on an unknown conversation fail with ConversationNotFoundError", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId("unknown")
        const attempts: ReadonlyArray<Effect.Effect<unknown, RepositoryService.Errors>> = [
          repo.getConversation(id),
          repo.listMessages(id, {}),
          repo.countMessages(id, {}),
          repo.deleteConversation(id),
          repo.getSummaryState(id),
          repo.listSummarizations(id),
          repo.commitSummary({
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
        assert.strictEqual((yield* Effect.flip(repo.getConversation(id)))._tag, "ConversationNotFoundError")
      }))

    it.effect("the summarization lock admits one holder per conversation and is released on failure", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId()
        const other = freshId()
        yield* repo.appendMessages(id, [newMessage("user", "u")])
        yield* repo.appendMessages(other, [newMessage("user", "u")])
        const nested = yield* repo.withSummarizationLock(
          id,
          Effect.all([
            repo.withSummarizationLock(id, Effect.succeed("inner")),
            repo.withSummarizationLock(other, Effect.succeed("other"))
          ])
        )
        assert.deepStrictEqual(nested, Option.some([Option.none(), Option.some("other")]))
        const failed = yield* Effect.exit(repo.withSummarizationLock(id, Effect.fail("boom")))
        assert.isTrue(Exit.isFailure(failed))
        assert.deepStrictEqual(yield* repo.withSummarizationLock(id, Effect.succeed(1)), Option.some(1))
      }))

    it.effect("the summarization lock is held while its holder waits, and released when it is interrupted", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId()
        yield* repo.appendMessages(id, [newMessage("user", "u")])
        const holding = yield* Deferred.make<undefined>()
        // A holder waiting for its model: held until interrupted.
        const holder = yield* Effect.fork(
          repo.withSummarizationLock(id, Effect.zipRight(Deferred.succeed(holding, undefined), Effect.never))
        )
        yield* Deferred.await(holding)
        assert.deepStrictEqual(yield* repo.withSummarizationLock(id, Effect.succeed("while held")), Option.none())
        // Writes and reads of the conversation go on meanwhile.
        const appended = yield* repo.appendMessages(id, [newMessage("assistant", "a")])
        assert.deepStrictEqual(appended.messages.map((m) => m.seq), [2])
        yield* Fiber.interrupt(holder)
        assert.deepStrictEqual(yield* repo.withSummarizationLock(id, Effect.succeed("after")), Option.some("after"))
      }))

    it.effect("the summarization lock of a conversation not stored yet runs its effect", () =>
      Effect.gen(function*() {
        const repo = yield* RepositoryService
        const id = freshId()
        assert.deepStrictEqual(yield* repo.withSummarizationLock(id, Effect.succeed("ran")), Option.some("ran"))
        // Taking the lock does not create the conversation.
        assert.strictEqual((yield* Effect.flip(repo.getConversation(id)))._tag, "ConversationNotFoundError")
      }))

    windowContract(it)
    searchContract(it)
    embeddingContract(it)
    settingsContract(it)
    conversationIdContract(it)
    jsonContract(it)
  })
