/**
 * The lexical search ranks alike on every store: over the development conversations, with each
 * question of their questions files as the query (asked where the file asks it), the SQL stores
 * return the same top hits as the in-memory index, in the same order, and recall returns the same
 * turns. PGlite always; PostgreSQL when `DATABASE_URL` is set.
 */
import { assert, describe, layer, type Vitest } from "@effect/vitest"
import { DateTime, Effect, Schema } from "effect"
import { readFileSync } from "node:fs"
import { QuestionsFile } from "../src/cli/Questions.js"
import * as Transcript from "../src/cli/Transcript.js"
import { MessageInput, type NewMessage } from "../src/domain/Message.js"
import { sampleSize } from "../src/layers/store/internal/sql/search.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as Store from "../src/layers/store/Store.js"
import { searchTurns } from "../src/strategies/Recall.js"
import { freshId } from "./fixtures/messages.js"
import { pgliteRepository } from "./fixtures/pglite.js"
import { describePostgres, repositoryLayer } from "./fixtures/postgres.js"

/** The development sets: their conversations are tuned on, so their rankings are checked here. */
const sets = ["offsite", "offsite.hard", "trip", "trip.hard", "chat"] as const

/** How many hits, and recalled turns, are compared. */
const topHits = 10
const topTurns = 5

const decodeQuestions = Schema.decodeUnknownSync(Schema.parseJson(QuestionsFile))
const decodeMessage = Schema.decodeUnknownSync(Schema.parseJson(MessageInput))

/** A set's questions and its conversation, turn by turn as an agent adds them. */
const load = (set: string) => {
  const file = decodeQuestions(readFileSync(new URL(`../examples/${set}.questions.json`, import.meta.url), "utf8"))
  const lines = readFileSync(new URL(`../examples/${file.transcript}`, import.meta.url), "utf8").split("\n")
  const messages = lines.filter((line) => line.trim().length > 0).map((line) => decodeMessage(line))
  return { questions: file.questions, turns: Transcript.turnsOf(messages) }
}

const stored = (turn: ReadonlyArray<MessageInput>): Array<NewMessage> =>
  turn.map((message) => ({
    role: message.role,
    content: message.content,
    metadata: message.metadata ?? {},
    tokenCount: Math.ceil(message.content.length / 4) + 4,
    createdAt: message.createdAt ?? DateTime.unsafeMake(0)
  }))

/** The share of `expected`'s seqs that `actual` holds too. */
const overlap = (actual: ReadonlyArray<number>, expected: ReadonlyArray<number>): number =>
  expected.length === 0 ? 1 : expected.filter((seq) => actual.includes(seq)).length / expected.length

/**
 * Appends each set's conversation to the store under test and to the in-memory reference, asks
 * every question where its file asks it, and compares the top hits and the recalled turns.
 *
 * While a conversation holds at most `sampleSize` messages, the rankings are the same: same hits,
 * same order, same turns. Past it, the SQL stores weigh a message's length against the mean of
 * their newest `sampleSize` messages, and the in-memory index against the mean of all: BM25's
 * length normalisation differs by a few percent, and two messages of nearly equal scores may
 * swap. Then the best hit is still the same for every question, and the top hits and recalled
 * turns agree within the bounds below (measured on the one set past it, chat: 99.2 % of the top 10
 * hits, and 80 of its 87 questions recall the same turns in the same order).
 */
const agreementTests = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  for (const set of sets) {
    it.effect(`ranks the questions of ${set} as the in-memory index does`, () =>
      Effect.gen(function*() {
        const subject = yield* Store.get
        const reference = yield* MemoryStore.make
        const { questions, turns } = load(set)
        const id = freshId(`agreement-${set}`)
        const lastSeqs: Array<number> = []
        const overlaps: Array<number> = []
        let sameTurns = 0
        for (const [i, turn] of turns.entries()) {
          const messages = stored(turn)
          yield* reference.repository.appendMessages(id, messages)
          const appended = yield* subject.repository.appendMessages(id, messages)
          lastSeqs.push(appended.messages.at(-1)?.seq ?? lastSeqs.at(-1) ?? 0)
          for (const question of questions.filter((q) => q.askedAfterTurn === i + 1)) {
            const before = (lastSeqs.at(-1) ?? 0) + 1
            const query = { text: question.question, before, limit: topHits }
            const expected = (yield* reference.index.searchMessages(id, query)).map((hit) => hit.seq)
            const actual = (yield* subject.index.searchMessages(id, query)).map((hit) => hit.seq)
            const recall = (store: Store.Store) =>
              Effect.map(
                searchTurns(store.repository, { index: store.index, conversationId: id }, {
                  query: question.question,
                  before,
                  limit: topTurns
                }),
                (found) => found.map((turn) => `${turn.fromSeq}-${turn.toSeq}`).join(" ")
              )
            const [actualTurns, expectedTurns] = [yield* recall(subject), yield* recall(reference)]
            if (before - 1 <= sampleSize) {
              assert.deepStrictEqual(actual, expected, question.id)
              assert.strictEqual(actualTurns, expectedTurns, question.id)
            }
            assert.strictEqual(actual[0], expected[0], question.id)
            overlaps.push(overlap(actual, expected))
            if (actualTurns === expectedTurns) sameTurns += 1
          }
        }
        assert.strictEqual(overlaps.length, questions.length)
        const meanOverlap = overlaps.reduce((sum, x) => sum + x, 0) / overlaps.length
        assert.isAtLeast(meanOverlap, 0.97)
        assert.isAtLeast(sameTurns / questions.length, 0.9)
      }), { timeout: 120_000 })
  }
}

describe("search agreement", () => {
  layer(pgliteRepository(), { timeout: 60_000 })("PGlite", (it) => agreementTests(it))
  describePostgres("search agreement on PostgreSQL", (url) => {
    layer(repositoryLayer(url), { timeout: 60_000 })("PostgreSQL", (it) => agreementTests(it))
  })
})
