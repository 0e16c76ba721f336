/**
 * The part of the message index contract about message vectors (hybrid recall): what is pending,
 * what is kept, how a vector search ranks, and that nothing crosses conversations, models, prunes
 * or deletes.
 */
import { assert, type Vitest } from "@effect/vitest"
import { DateTime, Effect, FastCheck as fc } from "effect"
import type { ConversationId } from "../../src/domain/ConversationId.js"
import * as Store from "../../src/layers/store/Store.js"
import { MessageIndex } from "../../src/services/MessageIndex.js"
import { RepositoryService } from "../../src/services/RepositoryService.js"
import { freshId, newMessage, testRecord } from "../fixtures/messages.js"

const model = "test-embedding"

/** A unit vector along axis `i` of `n`, plus a little of axis `j`. */
const axis = (n: number, i: number, j = i, mix = 0): Array<number> =>
  Array.from({ length: n }, (_, k) => (k === i ? 1 : 0) + (k === j ? mix : 0))

const seqsOf = (hits: ReadonlyArray<{ readonly seq: number }>) => hits.map((hit) => hit.seq)

const seed = (id: ConversationId) =>
  Effect.gen(function*() {
    const repo = yield* RepositoryService
    yield* repo.appendMessages(id, [
      newMessage("system", "You are the travel desk."),
      newMessage("user", "I want a window seat on the flight to Lisbon."),
      newMessage("assistant", "Noted: window seat, flight to Lisbon."),
      newMessage("user", "Also a vegetarian meal."),
      newMessage("assistant", "A vegetarian meal is booked."),
      newMessage("user", "What about the hotel?")
    ])
  })

/** Registers the vector tests in a contract suite. */
export const embeddingContract = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  it.effect("pending lists the searchable messages after the newest embedded one, oldest first", () =>
    Effect.gen(function*() {
      const repo = yield* MessageIndex
      const id = freshId("vectors")
      yield* seed(id)
      // The leading system message is never searched, so never pending.
      assert.deepStrictEqual(seqsOf(yield* repo.pendingEmbeddings(id, { model, limit: 100 })), [2, 3, 4, 5, 6])
      assert.deepStrictEqual(seqsOf(yield* repo.pendingEmbeddings(id, { model, limit: 2 })), [2, 3])
      yield* repo.storeEmbeddings(id, model, [{ seq: 2, vector: axis(4, 0) }, { seq: 3, vector: axis(4, 1) }])
      assert.deepStrictEqual(seqsOf(yield* repo.pendingEmbeddings(id, { model, limit: 100 })), [4, 5, 6])
      // Another model has its own progress.
      assert.deepStrictEqual(seqsOf(yield* repo.pendingEmbeddings(id, { model: "other", limit: 100 })), [2, 3, 4, 5, 6])
      // Pending messages come whole, as stored.
      const [first] = yield* repo.pendingEmbeddings(id, { model, limit: 1 })
      assert.strictEqual(first?.content, "Also a vegetarian meal.")
      assert.strictEqual(first?.role, "user")
    }))

  it.effect("search ranks by cosine similarity, below `before`, within one model", () =>
    Effect.gen(function*() {
      const repo = yield* MessageIndex
      const id = freshId("vectors")
      yield* seed(id)
      yield* repo.storeEmbeddings(id, model, [
        { seq: 2, vector: axis(4, 0) },
        // Not unit length: stores normalise, so the length does not change the score.
        { seq: 3, vector: axis(4, 0, 1, 1).map((x) => 7 * x) },
        { seq: 4, vector: axis(4, 1) },
        { seq: 5, vector: axis(4, 2) },
        { seq: 6, vector: axis(4, 3) }
      ])
      yield* repo.storeEmbeddings(id, "other", [{ seq: 5, vector: axis(4, 0) }])
      const hits = yield* repo.searchEmbeddings(id, { model, vector: axis(4, 0), before: 100, limit: 3 })
      // Seqs 4, 5 and 6 are orthogonal to the query: a tie, which goes to the newest.
      assert.deepStrictEqual(seqsOf(hits), [2, 3, 6])
      assert.closeTo(hits[0]?.score ?? 0, 1, 1e-5)
      assert.closeTo(hits[1]?.score ?? 0, Math.SQRT1_2, 1e-5)
      // `before` bounds the seqs; the query's length does not matter either.
      const below = yield* repo.searchEmbeddings(id, {
        model,
        vector: axis(4, 1).map((x) => 3 * x),
        before: 4,
        limit: 10
      })
      assert.deepStrictEqual(seqsOf(below), [3, 2])
      // The other model's vector of seq 5 points along axis 0, this model's does not.
      const other = yield* repo.searchEmbeddings(id, { model: "other", vector: axis(4, 0), before: 100, limit: 10 })
      assert.deepStrictEqual(seqsOf(other), [5])
    }))

  it.effect("a stored vector is replaced; empty and non-finite vectors mark a message done and are never found", () =>
    Effect.gen(function*() {
      const repo = yield* MessageIndex
      const id = freshId("vectors")
      yield* seed(id)
      yield* repo.storeEmbeddings(id, model, [{ seq: 2, vector: axis(3, 0) }, { seq: 3, vector: [] }])
      yield* repo.storeEmbeddings(id, model, [{ seq: 2, vector: axis(3, 1) }, { seq: 4, vector: [Number.NaN, 1, 0] }])
      const hits = yield* repo.searchEmbeddings(id, { model, vector: axis(3, 1), before: 100, limit: 10 })
      assert.deepStrictEqual(seqsOf(hits), [2])
      assert.closeTo(hits[0]?.score ?? 0, 1, 1e-5)
      assert.deepStrictEqual(seqsOf(yield* repo.pendingEmbeddings(id, { model, limit: 10 })), [5, 6])
      // A query vector without direction finds nothing.
      assert.deepStrictEqual(yield* repo.searchEmbeddings(id, { model, vector: [0, 0, 0], before: 100, limit: 10 }), [])
    }))

  it.effect("only vectors of the query's length compare: one of another length is another model's", () =>
    Effect.gen(function*() {
      const repo = yield* MessageIndex
      const id = freshId("vectors")
      yield* seed(id)
      yield* repo.storeEmbeddings(id, model, [
        { seq: 2, vector: axis(4, 0) },
        { seq: 3, vector: axis(3, 0) },
        { seq: 4, vector: axis(5, 0, 1, 1) }
      ])
      const near = (vector: Array<number>) =>
        Effect.map(repo.searchEmbeddings(id, { model, vector, before: 100, limit: 10 }), seqsOf)
      assert.deepStrictEqual(yield* near(axis(4, 0)), [2])
      assert.deepStrictEqual(yield* near(axis(3, 0)), [3])
      assert.deepStrictEqual(yield* near(axis(5, 1)), [4])
      assert.deepStrictEqual(yield* near(axis(6, 0)), [])
    }))

  it.effect("an unknown conversation has nothing pending and nothing found; vectors for it are dropped", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("vectors")
      assert.deepStrictEqual(yield* store.index.pendingEmbeddings(id, { model, limit: 10 }), [])
      yield* store.index.storeEmbeddings(id, model, [{ seq: 1, vector: axis(2, 0) }])
      yield* store.repository.appendMessages(id, [newMessage("user", "first words")])
      // The vector stored before the conversation existed was dropped: seq 1 is pending, not found.
      assert.deepStrictEqual(
        yield* store.index.searchEmbeddings(id, { model, vector: axis(2, 0), before: 100, limit: 10 }),
        []
      )
      assert.deepStrictEqual(seqsOf(yield* store.index.pendingEmbeddings(id, { model, limit: 10 })), [1])
      // A vector for a seq past the last message is dropped too.
      yield* store.index.storeEmbeddings(id, model, [{ seq: 7, vector: axis(2, 0) }])
      assert.deepStrictEqual(seqsOf(yield* store.index.pendingEmbeddings(id, { model, limit: 10 })), [1])
    }))

  it.effect("deleting a conversation deletes its vectors: the same id starts over", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("vectors")
      yield* seed(id)
      yield* store.index.storeEmbeddings(id, model, [2, 3, 4, 5, 6].map((seq) => ({ seq, vector: axis(5, seq - 2) })))
      yield* store.repository.deleteConversation(id)
      assert.deepStrictEqual(
        yield* store.index.searchEmbeddings(id, { model, vector: axis(5, 0), before: 100, limit: 10 }),
        []
      )
      yield* store.repository.appendMessages(id, [
        newMessage("user", "a new start"),
        newMessage("assistant", "welcome")
      ])
      assert.deepStrictEqual(seqsOf(yield* store.index.pendingEmbeddings(id, { model, limit: 10 })), [1, 2])
      assert.deepStrictEqual(
        yield* store.index.searchEmbeddings(id, { model, vector: axis(5, 0), before: 100, limit: 10 }),
        []
      )
    }))

  it.effect("vectors read before a deletion never attach to the messages written again at their seqs", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("vectors")
      const at = (minute: number) => DateTime.unsafeMake(Date.UTC(2026, 0, 1, 0, minute))
      const said = (role: "user" | "assistant", content: string, minute: number) => ({
        ...newMessage(role, content),
        createdAt: at(minute)
      })
      yield* store.repository.appendMessages(id, [said("user", "old secret", 1), said("assistant", "noted", 2)])
      const read = yield* store.index.pendingEmbeddings(id, { model, limit: 10 })
      yield* store.repository.deleteConversation(id)
      yield* store.repository.appendMessages(id, [said("user", "a new start", 5), said("assistant", "welcome", 6)])
      // The vectors of the deleted messages, by the times they were read with: dropped.
      yield* store.index.storeEmbeddings(
        id,
        model,
        read.map((message, i) => ({ seq: message.seq, vector: axis(5, i), createdAt: message.createdAt }))
      )
      assert.deepStrictEqual(seqsOf(yield* store.index.pendingEmbeddings(id, { model, limit: 10 })), [1, 2])
      assert.deepStrictEqual(
        yield* store.index.searchEmbeddings(id, { model, vector: axis(5, 0), before: 100, limit: 10 }),
        []
      )
      // The new messages' own vectors are kept.
      const fresh = yield* store.index.pendingEmbeddings(id, { model, limit: 10 })
      yield* store.index.storeEmbeddings(
        id,
        model,
        fresh.map((message, i) => ({ seq: message.seq, vector: axis(5, i), createdAt: message.createdAt }))
      )
      assert.deepStrictEqual(
        seqsOf(yield* store.index.searchEmbeddings(id, { model, vector: axis(5, 0), before: 100, limit: 1 })),
        [1]
      )
    }))

  it.effect("pruned messages lose their vectors and are never found", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("vectors")
      yield* seed(id)
      yield* store.index.storeEmbeddings(
        id,
        model,
        [2, 3, 4, 5, 6].map((seq) => ({ seq, vector: axis(5, 0, seq - 2, 0.1) }))
      )
      const committed = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 0, version: 0 },
        narrative: "Window seat to Lisbon.",
        facts: [],
        cursor: 3,
        record: testRecord(2, 3, "Window seat to Lisbon."),
        prune: true
      })
      assert.strictEqual(committed._tag, "Committed")
      const hits = yield* store.index.searchEmbeddings(id, { model, vector: axis(5, 0), before: 100, limit: 10 })
      assert.deepStrictEqual(seqsOf(hits).sort(), [4, 5, 6])
    }))

  it.effect("no vector of another conversation is ever found (property)", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const dims = 6
      const vector = fc.array(fc.integer({ min: -5, max: 5 }), { minLength: dims, maxLength: dims })
      const samples = fc.sample(
        fc.record({
          a: fc.array(vector, { minLength: 1, maxLength: 5 }),
          b: fc.array(vector, { minLength: 1, maxLength: 5 }),
          query: vector
        }),
        { numRuns: 15, seed: 20261123 }
      )
      for (const sample of samples) {
        const a = freshId("vectors-a")
        const b = freshId("vectors-b")
        yield* store.repository.appendMessages(a, sample.a.map((_, i) => newMessage("user", `pallet dock ${i}`)))
        yield* store.repository.appendMessages(b, sample.b.map((_, i) => newMessage("user", `pallet dock ${i}`)))
        yield* store.index.storeEmbeddings(a, model, sample.a.map((v, i) => ({ seq: i + 1, vector: v })))
        yield* store.index.storeEmbeddings(b, model, sample.b.map((v, i) => ({ seq: i + 1, vector: v })))
        const hits = yield* store.index.searchEmbeddings(a, { model, vector: sample.query, before: 100, limit: 100 })
        // Only a's seqs, each once, and only those with a direction (when the query has one).
        const seqs = seqsOf(hits)
        assert.strictEqual(new Set(seqs).size, seqs.length)
        assert.isTrue(seqs.every((seq) => seq >= 1 && seq <= sample.a.length), JSON.stringify(seqs))
        const scores = hits.map((hit) => hit.score)
        assert.deepStrictEqual(scores, [...scores].sort((x, y) => y - x))
        assert.isTrue(scores.every((score) => score <= 1 + 1e-5 && score >= -1 - 1e-5))
      }
    }))
}
