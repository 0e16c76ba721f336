/**
 * The search across a user's conversations ranks alike on every store: a development conversation
 * cut into three conversations of one user, each question of its questions file asked where the
 * file asks it (from the conversation then being written, below its last message), and the SQL
 * stores return the same hits as the in-memory store, in the same order, and the same turns. The
 * sets hold fewer messages than the SQL search's sample, so the rankings are the same (see
 * `SearchAgreement.test.ts`). PGlite always; PostgreSQL when `DATABASE_URL` is set.
 */
import { assert, describe, layer, type Vitest } from "@effect/vitest"
import { DateTime, Effect, Schema } from "effect"
import { readFileSync } from "node:fs"
import { QuestionsFile } from "../src/cli/Questions.js"
import * as Transcript from "../src/cli/Transcript.js"
import type { ConversationId } from "../src/domain/ConversationId.js"
import { MessageInput } from "../src/domain/Message.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as Store from "../src/layers/store/Store.js"
import type { UserStore } from "../src/services/UserStore.js"
import { freshUser } from "./contracts/UserStoreContract.js"
import { freshId } from "./fixtures/messages.js"
import { pgliteRepository } from "./fixtures/pglite.js"
import { describePostgres, repositoryLayer } from "./fixtures/postgres.js"

/** Development sets under the SQL search's sample size. */
const sets = ["offsite", "trip"] as const

const decodeQuestions = Schema.decodeUnknownSync(Schema.parseJson(QuestionsFile))
const decodeMessage = Schema.decodeUnknownSync(Schema.parseJson(MessageInput))

const load = (set: string) => {
  const file = decodeQuestions(readFileSync(new URL(`../examples/${set}.questions.json`, import.meta.url), "utf8"))
  const lines = readFileSync(new URL(`../examples/${file.transcript}`, import.meta.url), "utf8").split("\n")
  const messages = lines.filter((line) => line.trim().length > 0).map((line) => decodeMessage(line))
  return { questions: file.questions, turns: Transcript.turnsOf(messages) }
}

/**
 * Hits as comparable text, best first; hits of equal scores (to 1e-9) in a fixed order, since the
 * stores break a tie between conversations each their own way.
 */
const ranked = (hits: ReadonlyArray<UserStore.SearchHit>, names: ReadonlyMap<string, string>) =>
  hits
    .map((hit) => ({ score: Math.round(hit.score * 1e9), name: `${names.get(hit.conversationId)}:${hit.seq}` }))
    .sort((x, y) => y.score - x.score || (x.name < y.name ? -1 : 1))
    .map((hit) => hit.name)

const agreementTests = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  for (const set of sets) {
    it.effect(
      `ranks the questions of ${set} across a user's conversations as the in-memory store does`,
      () =>
        Effect.gen(function*() {
          const subject = yield* Store.get
          const reference = yield* MemoryStore.make
          const { questions, turns } = load(set)
          const userId = freshUser(set)
          const ids: ReadonlyArray<ConversationId> = [0, 1, 2].map((part) => freshId(`${set}-part${part}`))
          const names = new Map(ids.map((id, part) => [id, `part${part}`]))
          const lastSeqs = new Map<ConversationId, number>()
          let asked = 0
          let acrossConversations = 0
          for (const [i, turn] of turns.entries()) {
            const id = ids[Math.min(2, Math.floor((3 * i) / turns.length))] ?? ids[0]
            if (id === undefined) continue
            const messages = turn.map((message) => ({
              role: message.role,
              content: message.content,
              metadata: message.metadata ?? {},
              tokenCount: Math.ceil(message.content.length / 4) + 4,
              createdAt: message.createdAt ?? DateTime.unsafeMake(i * 60_000)
            }))
            yield* reference.repository.appendMessages(id, messages, { userId })
            const appended = yield* subject.repository.appendMessages(id, messages, { userId })
            lastSeqs.set(id, appended.messages.at(-1)?.seq ?? lastSeqs.get(id) ?? 0)
            for (const question of questions.filter((q) => q.askedAfterTurn === i + 1)) {
              const query = {
                text: question.question,
                limit: 10,
                current: { conversationId: id, before: (lastSeqs.get(id) ?? 0) + 1 }
              }
              const expected = yield* reference.users.searchMessages(userId, query)
              const actual = yield* subject.users.searchMessages(userId, query)
              assert.deepStrictEqual(ranked(actual, names), ranked(expected, names), question.id)
              if (new Set(expected.map((hit) => hit.conversationId)).size > 1) acrossConversations += 1
              const turnsOf = (store: Store.Store, hits: ReadonlyArray<UserStore.SearchHit>) =>
                Effect.map(
                  store.users.readTurns(userId, { hits, limit: 5 }),
                  (found) =>
                    found.map((t) => `${names.get(t.conversationId)}:${t.messages.map((m) => m.seq).join(",")}`)
                )
              assert.deepStrictEqual(
                yield* turnsOf(subject, expected),
                yield* turnsOf(reference, expected),
                question.id
              )
              asked += 1
            }
          }
          assert.strictEqual(asked, questions.length)
          // Most questions find hits in more than one of the conversations.
          assert.isAbove(acrossConversations, questions.length / 2)
        }),
      { timeout: 120_000 }
    )
  }
}

describe("user search agreement", () => {
  layer(pgliteRepository(), { timeout: 60_000 })("PGlite", (it) => agreementTests(it))
  describePostgres("user search agreement on PostgreSQL", (url) => {
    layer(repositoryLayer(url), { timeout: 60_000 })("PostgreSQL", (it) => agreementTests(it))
  })
})
