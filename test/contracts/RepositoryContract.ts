/**
 * The contract of the conversation log (`RepositoryService`): appends with atomic seqs, range reads
 * and counts, the round trip of contents and metadata, window reads, turn reads, conversation ids,
 * and the delete that clears the conversation in every port.
 */
import { assert, type Vitest } from "@effect/vitest"
import { Array, Effect, Exit } from "effect"
import type { ConversationId } from "../../src/domain/ConversationId.js"
import { ConversationSettings } from "../../src/domain/ConversationSettings.js"
import * as Store from "../../src/layers/store/Store.js"
import { RepositoryService } from "../../src/services/RepositoryService.js"
import { freshId, newMessage } from "../fixtures/messages.js"
import { conversationIdContract } from "./ConversationIdContract.js"
import { jsonContract } from "./JsonContract.js"
import { record } from "./SummaryStoreContract.js"
import { turnsContract } from "./TurnsContract.js"
import { windowContract } from "./WindowContract.js"

const seqsOf = (messages: ReadonlyArray<{ readonly seq: number }>) => messages.map((m) => m.seq)

/** Registers the log's contract in a suite whose layer provides a store. */
export const repositoryContract = (it: Vitest.MethodsNonLive<Store.Ports>) => {
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
      assert.deepStrictEqual(result, { messages: [], messageCount: 0, userId: null })
      const error = yield* Effect.flip(repo.getConversation(id))
      assert.strictEqual(error._tag, "ConversationNotFoundError")
    }))

  it.effect("100 concurrent appends on one conversation: seqs 1..N, no gap, no duplicate, nothing lost", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const id = freshId("concurrent")
      const batches = Array.makeBy(
        100,
        (i) => Array.makeBy(1 + (i % 3), (j) => newMessage(j === 0 ? "user" : "assistant", `writer ${i} message ${j}`))
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
      const store = yield* Store.get
      const id = freshId()
      const other = freshId()
      yield* store.repository.appendMessages(id, [
        newMessage("user", "u1"),
        newMessage("assistant", "a1"),
        newMessage("user", "u2")
      ])
      yield* store.repository.appendMessages(other, [newMessage("user", "other")])
      const commit = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 0, version: 0 },
        narrative: "n",
        facts: [],
        cursor: 2,
        record: record(1, 2)
      })
      assert.strictEqual(commit._tag, "Committed")
      yield* store.repository.deleteConversation(id)
      const attempts: ReadonlyArray<Effect.Effect<unknown, RepositoryService.Errors>> = [
        store.repository.getConversation(id),
        store.repository.listMessages(id, {}),
        store.repository.countMessages(id, {}),
        store.summaries.getSummaryState(id),
        store.summaries.listSummarizations(id)
      ]
      for (const attempt of attempts) {
        const error = yield* Effect.flip(attempt)
        assert.strictEqual(error._tag, "ConversationNotFoundError")
      }
      // Other conversations are untouched; a new append starts the id afresh.
      assert.strictEqual((yield* store.repository.listMessages(other, {})).length, 1)
      const again = yield* store.repository.appendMessages(id, [newMessage("user", "fresh")])
      assert.deepStrictEqual(seqsOf(again.messages), [1])
      const state = yield* store.summaries.getSummaryState(id)
      assert.deepStrictEqual([state.cursor, state.version, state.narrative], [0, 0, ""])
      assert.strictEqual((yield* store.summaries.listSummarizations(id)).length, 0)
    }))

  it.effect("log operations on an unknown conversation fail with ConversationNotFoundError", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const id = freshId("unknown")
      const attempts: ReadonlyArray<Effect.Effect<unknown, RepositoryService.Errors>> = [
        repo.getConversation(id),
        repo.listMessages(id, {}),
        repo.countMessages(id, {}),
        repo.deleteConversation(id)
      ]
      for (const attempt of attempts) {
        const exit = yield* Effect.exit(attempt)
        assert.isTrue(Exit.isFailure(exit))
        const error = yield* Effect.flip(attempt)
        assert.strictEqual(error._tag, "ConversationNotFoundError")
        if (error._tag === "ConversationNotFoundError") assert.strictEqual(error.conversationId, id)
      }
    }))

  it.effect("deleteConversation clears every port in one call: summary state, records, settings, index, embeddings", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("cascade")
      const other = freshId("cascade")
      const model = "contract-embedder"
      const seed = (conversationId: ConversationId) =>
        store.repository.appendMessages(conversationId, [
          newMessage("user", "Where is order ORD-2024-55120?"),
          newMessage("assistant", "Order ORD-2024-55120 left the Lyon depot."),
          newMessage("user", "And the invoice?"),
          newMessage("assistant", "Invoice INV-7781 is attached.")
        ])
      yield* seed(id)
      yield* seed(other)
      for (const conversationId of [id, other]) {
        const committed = yield* store.summaries.commitSummary({
          conversationId,
          expected: { cursor: 0, version: 0 },
          narrative: "The user asked about order ORD-2024-55120.",
          facts: [{ key: "order", value: "ORD-2024-55120", category: "ENTITY" }],
          cursor: 2,
          record: record(1, 2),
          summaryMessage: { content: "The user asked about order ORD-2024-55120.", tokenCount: 9 }
        })
        assert.strictEqual(committed._tag, "Committed")
        yield* store.settings.setSettings(
          conversationId,
          new ConversationSettings({ tokenBudget: 900, view: "stable" })
        )
        yield* store.index.storeEmbeddings(conversationId, model, [
          { seq: 1, vector: [1, 0] },
          { seq: 2, vector: [0.6, 0.8] }
        ])
      }
      const search = (conversationId: ConversationId) =>
        store.index.searchMessages(conversationId, { text: "ORD-2024-55120", before: 100, limit: 10 })
      const nearest = (conversationId: ConversationId) =>
        Effect.map(
          store.index.searchEmbeddings(conversationId, { model, vector: [1, 0], before: 100, limit: 10 }),
          seqsOf
        )
      const pending = (conversationId: ConversationId) =>
        Effect.map(store.index.pendingEmbeddings(conversationId, { model, limit: 10 }), seqsOf)
      // Everything is there before the delete.
      assert.isAbove((yield* search(id)).length, 0)
      assert.deepStrictEqual(yield* nearest(id), [1, 2])
      assert.deepStrictEqual(yield* pending(id), [3, 4])

      yield* store.repository.deleteConversation(id)

      const attempts: ReadonlyArray<Effect.Effect<unknown, RepositoryService.Errors>> = [
        store.summaries.getSummaryState(id),
        store.summaries.listSummarizations(id)
      ]
      for (const attempt of attempts) {
        assert.strictEqual((yield* Effect.flip(attempt))._tag, "ConversationNotFoundError")
      }
      assert.deepStrictEqual({ ...(yield* store.settings.getSettings(id)) }, {})
      assert.deepStrictEqual(yield* search(id), [])
      assert.deepStrictEqual(yield* nearest(id), [])
      assert.deepStrictEqual(yield* pending(id), [])
      // The other conversation keeps everything.
      assert.strictEqual((yield* store.summaries.getSummaryState(other)).version, 1)
      assert.strictEqual((yield* store.summaries.listSummarizations(other)).length, 1)
      assert.deepStrictEqual({ ...(yield* store.settings.getSettings(other)) }, { tokenBudget: 900, view: "stable" })
      assert.isAbove((yield* search(other)).length, 0)
      assert.deepStrictEqual(yield* nearest(other), [1, 2])
      // The id starts afresh: nothing of the old conversation comes back under the new seqs.
      yield* store.repository.appendMessages(id, [newMessage("user", "A new question about order ORD-2024-55120.")])
      const state = yield* store.summaries.getSummaryState(id)
      assert.deepStrictEqual([state.cursor, state.version, state.narrative, state.facts], [0, 0, "", []])
      assert.deepStrictEqual(yield* store.summaries.listSummarizations(id), [])
      assert.deepStrictEqual({ ...(yield* store.settings.getSettings(id)) }, {})
      assert.deepStrictEqual(seqsOf(yield* search(id)), [1])
      assert.deepStrictEqual(yield* nearest(id), [])
      assert.deepStrictEqual(yield* pending(id), [1])
    }))

  windowContract(it)
  turnsContract(it)
  conversationIdContract(it)
  jsonContract(it)
}
