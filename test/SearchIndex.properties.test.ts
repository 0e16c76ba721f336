/**
 * The in-memory store's indexes of a user's conversations follow every change to them: after any
 * history of appends, prunes, deletions, conversations written again under the same id, bindings of
 * a conversation to the user and erasures, searched along the way, a search across the user's
 * conversations, and one of a conversation, answer as the same store searched for the first time.
 * The two stores take the same writes; only the first is searched between them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import * as UserId from "../src/domain/UserId.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import type * as Store from "../src/layers/store/Store.js"
import { newMessage, testRecord } from "./fixtures/messages.js"

const user = UserId.UserId.make("quinn")
const stranger = UserId.UserId.make("quinn-other")

/** Words shared by every conversation, and ids each said by a few messages: common and rare terms. */
const words = ["delivery", "invoice", "window", "refund", "pallet", "ORD-4471", "ORD-5582", "TP-1357", "Lisbon"]

const text = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 5 }).map((ws) => ws.join(" "))

type Step =
  | { readonly _tag: "append"; readonly conversation: number; readonly texts: ReadonlyArray<string> }
  | { readonly _tag: "appendUnbound"; readonly conversation: number; readonly texts: ReadonlyArray<string> }
  | { readonly _tag: "prune"; readonly conversation: number }
  | { readonly _tag: "delete"; readonly conversation: number }
  | { readonly _tag: "erase" }
  | { readonly _tag: "search"; readonly query: string; readonly current: number }

const conversation = fc.nat(3)

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      _tag: fc.constant<"append">("append"),
      conversation,
      texts: fc.array(text, { minLength: 1, maxLength: 4 })
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      _tag: fc.constant<"appendUnbound">("appendUnbound"),
      conversation,
      texts: fc.array(text, { minLength: 1, maxLength: 2 })
    })
  },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant<"prune">("prune"), conversation }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant<"delete">("delete"), conversation }) },
  { weight: 1, arbitrary: fc.constant<Step>({ _tag: "erase" }) },
  { weight: 3, arbitrary: fc.record({ _tag: fc.constant<"search">("search"), query: text, current: conversation }) }
)

const idOf = (n: number) => ConversationId.make(`quinn-c${n}`)

/**
 * The hits of a search, scores to nine places: an index that added and dropped documents sums its
 * mean length in another order, to the last bits.
 */
const search = (store: Store.Store, query: string, current: number) =>
  Effect.map(
    store.users.searchMessages(user, {
      text: query,
      limit: 100,
      current: { conversationId: idOf(current), before: 4 }
    }),
    (hits) => hits.map((hit) => `${hit.conversationId}:${hit.seq}:${hit.score.toFixed(9)}`).sort()
  )

/** Applies a write to a store; a write refused (a conversation of another user, one gone) changes nothing. */
const write = (store: Store.Store, s: Step): Effect.Effect<void, unknown> => {
  switch (s._tag) {
    case "append":
      return Effect.asVoid(store.repository.appendMessages(
        idOf(s.conversation),
        s.texts.map((t, i) => newMessage(i % 2 === 0 ? "user" : "assistant", t)),
        { userId: s.conversation === 3 ? stranger : user }
      ))
    case "appendUnbound":
      return Effect.asVoid(
        store.repository.appendMessages(idOf(s.conversation), s.texts.map((t) => newMessage("user", t)))
      )
    case "prune":
      return Effect.gen(function*() {
        const info = yield* store.repository.getConversation(idOf(s.conversation))
        const state = yield* store.summaries.getSummaryState(idOf(s.conversation))
        const cursor = Math.max(state.cursor, info.lastSeq - 2)
        if (cursor <= state.cursor) return
        yield* store.summaries.commitSummary({
          conversationId: idOf(s.conversation),
          expected: { cursor: state.cursor, version: state.version },
          narrative: "summary",
          facts: [],
          cursor,
          record: testRecord(state.cursor + 1, cursor, "summary"),
          prune: true
        })
      })
    case "delete":
      return store.repository.deleteConversation(idOf(s.conversation))
    case "erase":
      return Effect.asVoid(store.users.erase(user))
    case "search":
      return Effect.void
  }
}

describe("the in-memory search indexes", () => {
  it.effect("of a user's conversations and of each answer, after any history of changes searched along the way, as a store searched for the first time", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(step, { minLength: 1, maxLength: 20 }),
          fc.array(text, { minLength: 3, maxLength: 3 }),
          (steps, queries) =>
            Effect.runPromise(Effect.gen(function*() {
              const [followed, fresh] = [yield* MemoryStore.make, yield* MemoryStore.make]
              for (const s of steps) {
                if (s._tag === "search") {
                  yield* search(followed, s.query, s.current)
                  continue
                }
                yield* Effect.ignore(write(followed, s))
                yield* Effect.ignore(write(fresh, s))
              }
              for (const [i, query] of queries.entries()) {
                const [a, b] = [yield* search(followed, query, i), yield* search(fresh, query, i)]
                assert.deepStrictEqual(a, b, `${query} after ${JSON.stringify(steps)}`)
              }
            }))
        ),
        {
          numRuns: 1000,
          examples: [
            // Two prunes synced in one tick: a vacuum left to a later microtask left postings counted.
            [[
              { _tag: "append", conversation: 0, texts: ["delivery", "delivery", "invoice", "delivery", "delivery"] },
              { _tag: "search", query: "delivery", current: 0 },
              { _tag: "prune", conversation: 0 },
              { _tag: "search", query: "delivery", current: 0 },
              { _tag: "append", conversation: 0, texts: ["delivery", "invoice"] },
              { _tag: "prune", conversation: 0 }
            ], ["delivery", "invoice", "delivery"]],
            // A conversation deleted and written again under its id.
            [[
              { _tag: "append", conversation: 1, texts: ["refund ORD-4471", "refund"] },
              { _tag: "search", query: "refund", current: 0 },
              { _tag: "delete", conversation: 1 },
              { _tag: "append", conversation: 1, texts: ["window"] },
              { _tag: "search", query: "window", current: 0 }
            ], ["refund", "window", "ORD-4471"]]
          ]
        }
      )
    ))
})
