/**
 * The part of the log's contract recall reads hits with: `readTurns`, the whole turns that hold
 * given messages, in one read (which turns, cut where, in what order, how many).
 */
import { assert, type Vitest } from "@effect/vitest"
import { Effect } from "effect"
import * as Store from "../../src/layers/store/Store.js"
import { RepositoryService } from "../../src/services/RepositoryService.js"
import { freshId, newMessage, testRecord } from "../fixtures/messages.js"

const seqsOf = (turns: ReadonlyArray<ReadonlyArray<{ readonly seq: number }>>) =>
  turns.map((turn) => turn.map((m) => m.seq))

/** Two leading system messages, a greeting, then turns with a tool call, a mid-way system message and a summary record. */
const conversation = [
  newMessage("system", "rules"), // 1
  newMessage("system", "more rules"), // 2
  newMessage("assistant", "Hello! How can I help?"), // 3: the greeting, a turn of its own
  newMessage("user", "Where is my order?"), // 4
  newMessage("assistant", "", { toolCalls: [{ id: "c1", name: "lookup", params: { q: "order" } }] }), // 5
  newMessage("tool", "{\"order\":\"ORD-1\"}", { toolCallId: "c1", toolName: "lookup" }), // 6
  newMessage("assistant", "It is ORD-1.", { modelVariant: "mini" }), // 7
  newMessage("user", "Thanks. And the invoice?"), // 8
  newMessage("system", "Invoices are monthly."), // 9
  newMessage("assistant", "Monthly."), // 10
  newMessage("summary", "A record of the conversation so far."), // 11
  newMessage("user", "Bye"), // 12
  newMessage("assistant", "Goodbye!") // 13
]

/** Registers the turns read in a contract suite. */
export const turnsContract = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  it.effect("readTurns widens each message to its whole turn, each turn once, ascending, as stored", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const id = freshId("turns")
      const written = (yield* repo.appendMessages(id, conversation)).messages
      // Any message of a turn gives the whole turn: from its user message to the next one.
      for (const seq of [4, 5, 6, 7]) {
        assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [seq] })), [[4, 5, 6, 7]], `seq ${seq}`)
      }
      // The greeting before the first user message is a turn; a mid-way system message is part of its
      // turn; a summary record is never part of one.
      assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [3] })), [[3]])
      assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [9] })), [[8, 9, 10]])
      assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [13] })), [[12, 13]])
      // Several seqs: each turn once, ascending by seq whatever the order asked.
      const read = yield* repo.readTurns(id, { seqs: [13, 6, 10, 4, 12, 8] })
      assert.deepStrictEqual(seqsOf(read), [[4, 5, 6, 7], [8, 9, 10], [12, 13]])
      // The messages as stored: contents, roles, metadata, counts.
      assert.deepStrictEqual(
        read.flat().map((m) => [m.seq, m.role, m.content, m.metadata, m.tokenCount]),
        written.filter((m) => m.role !== "summary" && m.seq >= 4).map((
          m
        ) => [m.seq, m.role, m.content, m.metadata, m.tokenCount])
      )
      assert.isTrue(read.flat().every((m) => m.conversationId === id))
    }))

  it.effect("readTurns: leading system messages, summary records and unknown seqs hold no turn", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const id = freshId("turns")
      yield* repo.appendMessages(id, conversation)
      for (const seqs of [[1], [2], [11], [0], [-3], [14], [1000], [2.5], [], [Number.NaN]]) {
        assert.deepStrictEqual(yield* repo.readTurns(id, { seqs }), [], `seqs ${seqs}`)
      }
      assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [1, 11, 7, 14] })), [[4, 5, 6, 7]])
    }))

  it.effect("readTurns cuts a turn at before, and reads nothing at or past it", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const id = freshId("turns")
      yield* repo.appendMessages(id, conversation)
      assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [5], before: 6 })), [[4, 5]])
      assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [5, 8], before: 8 })), [[4, 5, 6, 7]])
      assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [12], before: 12 })), [])
      assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [12], before: 100 })), [[12, 13]])
    }))

  it.effect("readTurns with a limit reads the turns of the first seqs given", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const id = freshId("turns")
      yield* repo.appendMessages(id, conversation)
      // 13 and 12 are one turn: the first two turns asked for are [12, 13] and [4..7].
      assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [13, 12, 6, 9], limit: 2 })), [
        [4, 5, 6, 7],
        [12, 13]
      ])
      // Seqs that hold no turn do not count.
      assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [1, 11, 9], limit: 1 })), [[8, 9, 10]])
      assert.deepStrictEqual(yield* repo.readTurns(id, { seqs: [4], limit: 0 }), [])
    }))

  it.effect("readTurns after a prune: pruned messages hold no turn, and the first stored turn starts the log", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("turns")
      yield* store.repository.appendMessages(id, conversation.slice(0, 10))
      const committed = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 0, version: 0 },
        narrative: "ORD-1 was found.",
        facts: [],
        cursor: 7,
        record: testRecord(3, 7, "ORD-1 was found."),
        prune: true
      })
      assert.strictEqual(committed._tag, "Committed")
      assert.deepStrictEqual(yield* store.repository.readTurns(id, { seqs: [3, 5, 7] }), [])
      assert.deepStrictEqual(seqsOf(yield* store.repository.readTurns(id, { seqs: [10] })), [[8, 9, 10]])
    }))

  it.effect("readTurns reads a long turn whole, whichever of its messages is named", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const id = freshId("turns")
      // Turns of 1 + 150 messages: far longer than a store's first look around a seq may reach.
      const long = (n: number) => [
        newMessage("user", `question ${n}`),
        ...Array.from({ length: 150 }, (_, i) => newMessage("assistant", `part ${n}.${i}`))
      ]
      yield* repo.appendMessages(id, [...long(1), ...long(2), ...long(3)])
      const second = Array.from({ length: 151 }, (_, i) => 152 + i)
      for (const seq of [152, 153, 230, 302]) {
        assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [seq] })), [second], `seq ${seq}`)
      }
      assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [453] })), [
        Array.from({ length: 151 }, (_, i) => 303 + i)
      ])
      assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [230], before: 200 })), [])
      assert.deepStrictEqual(seqsOf(yield* repo.readTurns(id, { seqs: [170], before: 200 })), [second.slice(0, 48)])
    }))

  it.effect("readTurns on an unknown conversation fails with ConversationNotFoundError", () =>
    Effect.gen(function*() {
      const repo = yield* RepositoryService
      const error = yield* Effect.flip(repo.readTurns(freshId("turns"), { seqs: [1] }))
      assert.strictEqual(error._tag, "ConversationNotFoundError")
    }))
}
