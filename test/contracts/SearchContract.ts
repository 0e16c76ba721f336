/**
 * The part of the message index contract about `searchMessages`: what a search may return (the
 * searched conversation's own messages, never a summary or a leading system message, never a
 * pruned one, only before `before`), what it must find (identifiers, amounts, dates, emails, tool
 * results and tool-call params, ahead of distractors that share the question's common words), and
 * that any query text is safe.
 */
import { assert, type Vitest } from "@effect/vitest"
import { Array, Effect, Either, FastCheck as fc } from "effect"
import type { ConversationId } from "../../src/domain/ConversationId.js"
import type { NewMessage } from "../../src/domain/Message.js"
import * as Store from "../../src/layers/store/Store.js"
import { MessageIndex } from "../../src/services/MessageIndex.js"
import { RepositoryService } from "../../src/services/RepositoryService.js"
import { freshId, newMessage, testRecord } from "../fixtures/messages.js"

const seqsOf = (hits: ReadonlyArray<{ readonly seq: number }>) => hits.map((hit) => hit.seq)

const months = ["January", "February", "March", "May", "June", "July", "August", "September", "October"]

/**
 * Distractor `i`: it shares the common words of the questions below (total, order, amount,
 * delivery, date, email, send, invoice) and has ids, amounts, dates and emails of its own.
 */
const distractor = (i: number): string =>
  `The total for your order ORD-2024-${10_000 + i} is $${(200 + 7 * i).toFixed(2)}; the invoice amount ` +
  `was checked again. Delivery date: ${months[i % months.length]} ${1 + (i % 17)}, 2025-0${1 + (i % 9)}-0${
    1 + (i % 9)
  }. Send questions to agent${i}@shop.example.`

/** The messages the needle tests search: a system prefix, then distractors around six needles. */
const needles = {
  order: "Your order ORD-2024-88417 is confirmed; the total comes to the sum we discussed.",
  dollars: "The invoice for the replacement parts: $1,240.00, due within 30 days.",
  euros: "Das Angebot beträgt € 3.450,00 inklusive Versand.",
  month: "The courier can pick the pallets up on April 18 at the north gate.",
  iso: "Booked slot: 2026-04-18, morning window.",
  email: "Please write to jane.doe@example.com for the customs paperwork."
} as const

const seedNeedles = (id: ConversationId) =>
  Effect.gen(function*() {
    const repo = yield* RepositoryService
    const messages: Array<NewMessage> = [newMessage("system", "You are the order desk of a parts shop.")]
    const at: Record<string, number> = {}
    let d = 0
    for (const [name, content] of Object.entries(needles)) {
      for (let k = 0; k < 8; k++) {
        messages.push(newMessage(d % 2 === 0 ? "user" : "assistant", distractor(d)))
        d += 1
      }
      messages.push(newMessage("assistant", content))
      at[name] = messages.length
    }
    for (; d < 56; d++) messages.push(newMessage(d % 2 === 0 ? "user" : "assistant", distractor(d)))
    yield* repo.appendMessages(id, messages)
    return { at, lastSeq: messages.length }
  })

/** The contents of a conversation's messages by seq. */
const contents = (id: ConversationId) =>
  Effect.map(
    Effect.flatMap(RepositoryService, (repo) => repo.listMessages(id, {})),
    (messages) => new Map(messages.map((m) => [m.seq, m.content]))
  )

const sharedWords = ["pallet", "dock", "invoice", "carrier", "route", "refund", "crate", "ledger"]
const wordsOfA = ["amber", "azure", "apricot", "anvil"]
const wordsOfB = ["birch", "bronze", "bramble", "beacon"]

const sentence = (vocabulary: ReadonlyArray<string>) =>
  fc.array(fc.constantFrom(...vocabulary), { minLength: 1, maxLength: 6 }).map((words) => words.join(" "))

const wordsOf = (text: string): ReadonlySet<string> => new Set(text.toLowerCase().split(/[^a-z]+/))

/** Registers the search tests in a contract suite. */
export const searchContract = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  it.effect("an identifier, an amount, a date or an email ranks first among distractors sharing the common words", () =>
    Effect.gen(function*() {
      const repo = yield* MessageIndex
      const id = freshId("search")
      const { at, lastSeq } = yield* seedNeedles(id)
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["what was the total for ORD-2024-88417 again?", "order"],
        ["ORD-2024-88417", "order"],
        ["ord-2024-88417 total", "order"],
        ["Was the invoice amount $1,240.00 or more?", "dollars"],
        ["the invoice said 1240.00, right?", "dollars"],
        ["Which order came to € 3.450,00?", "euros"],
        ["was the total 3,450.00 EUR?", "euros"],
        ["what delivery date did we agree for April 18?", "month"],
        ["is the delivery date 2026-04-18 still booked?", "iso"],
        ["send the invoice to jane.doe@example.com again", "email"],
        ["which email: JANE.DOE@EXAMPLE.COM?", "email"]
      ]
      for (const [text, needle] of cases) {
        const hits = yield* repo.searchMessages(id, { text, before: lastSeq + 1, limit: 10 })
        assert.strictEqual(hits[0]?.seq, at[needle], `${text} -> ${JSON.stringify(hits.slice(0, 3))}`)
        // The needle outranks every distractor, not only by a tie-break.
        assert.isAbove(hits[0]?.score ?? 0, hits[1]?.score ?? 0, text)
      }
    }))

  it.effect("an OR over the words: a message holding only some of them is found, the rare word counting most", () =>
    Effect.gen(function*() {
      const repo = yield* MessageIndex
      const id = freshId("search")
      const { at, lastSeq } = yield* seedNeedles(id)
      // No message holds every word of the question; the needle holds only the identifier.
      const hits = yield* repo.searchMessages(id, {
        text: "remind me, the delivery of ORD-2024-88417 to the warehouse, what was the tracking total?",
        before: lastSeq + 1,
        limit: 100
      })
      assert.strictEqual(hits[0]?.seq, at.order)
      // The common words alone still find the distractors: 56 hold "delivery" or "total".
      assert.strictEqual(hits.length, 57)
      for (let i = 1; i < hits.length; i++) assert.isAtMost(hits[i]?.score ?? 0, hits[i - 1]?.score ?? 0)
    }))

  it.effect("a word is found by its inflected forms (Porter stemming)", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("search")
      yield* store.repository.appendMessages(id, [
        newMessage("user", "I booked the connecting flights to Osaka yesterday."),
        newMessage("assistant", "Noted: your hotel cancellation is free until June 20."),
        newMessage("user", "The crate ships with the demo units on Monday."),
        ...Array.makeBy(6, (i) => newMessage("assistant", `Plain filler note number ${i} about the agenda.`))
      ])
      const search = (text: string) =>
        Effect.map(store.index.searchMessages(id, { text, before: 100, limit: 10 }), (hits) => hits.map((h) => h.seq))
      // "booking" and "booked", "connection" and "connecting", "flight" and "flights" meet.
      assert.deepStrictEqual(yield* search("Which booking did I make for the connection flight?"), [1])
      assert.deepStrictEqual(yield* search("can I cancel the hotel?"), [2])
      assert.deepStrictEqual(yield* search("when does the crate ship?"), [3])
    }))

  it.effect("one rare word outweighs two common ones (inverse document frequency)", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("search")
      yield* store.repository.appendMessages(id, [
        ...Array.makeBy(20, (i) => newMessage("user", `The delivery total for crate ${i} was checked.`)),
        newMessage("assistant", "Noted under reference 88417."),
        ...Array.makeBy(20, (i) => newMessage("user", `The delivery total for crate ${20 + i} was checked.`))
      ])
      const hits = yield* store.index.searchMessages(id, {
        text: "what was the delivery total for 88417?",
        before: 100,
        limit: 100
      })
      // The needle matches one word of the question, each distractor two.
      assert.strictEqual(hits[0]?.seq, 21)
      assert.strictEqual(hits.length, 41)
      // Far more: the distractors' two words together weigh less than a tenth of the rare one.
      assert.isAbove(hits[0]?.score ?? 0, 10 * (hits[1]?.score ?? 0))
    }))

  it.effect("a long conversation: common words weigh little, the needle still ranks first", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("search")
      // Every distractor holds "delivery" and "total": more than a search ranks exhaustively.
      yield* store.repository.appendMessages(id, [
        newMessage("system", "You track deliveries."),
        ...Array.makeBy(400, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `Delivery total ${i}: checked.`)),
        newMessage("assistant", "Reference ORD-2024-88417 is booked."),
        ...Array.makeBy(400, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `Delivery total ${400 + i}: ok.`))
      ])
      const needle = 402
      const ask = (text: string, before: number) => store.index.searchMessages(id, { text, before, limit: 10 })
      assert.strictEqual((yield* ask("what was the delivery total for ORD-2024-88417?", 1000))[0]?.seq, needle)
      assert.deepStrictEqual(seqsOf(yield* ask("ORD-2024-88417", 1000)), [needle])
      assert.deepStrictEqual(yield* ask("ORD-2024-88417", needle), [])
      // Common words only: `limit` hits, each holding one, all before `before`.
      const common = yield* ask("the delivery total?", 700)
      assert.strictEqual(common.length, 10)
      // The limit is brought into 1..100.
      assert.strictEqual(
        (yield* store.index.searchMessages(id, { text: "delivery", before: 1000, limit: 1000 })).length,
        100
      )
      assert.strictEqual(
        (yield* store.index.searchMessages(id, { text: "delivery", before: 1000, limit: 0 })).length,
        1
      )
      assert.deepStrictEqual(
        yield* store.index.searchMessages(id, { text: "delivery", before: Number.NaN, limit: 5 }),
        []
      )
      const all = yield* contents(id)
      for (const hit of common) {
        assert.isBelow(hit.seq, 700)
        assert.isTrue(/delivery|total/i.test(all.get(hit.seq) ?? ""), `hit ${hit.seq}`)
      }
    }))

  it.effect("only messages before `before`", () =>
    Effect.gen(function*() {
      const repo = yield* MessageIndex
      const id = freshId("search")
      const { at, lastSeq } = yield* seedNeedles(id)
      const needle = at.order ?? 0
      const search = (before: number) => repo.searchMessages(id, { text: "ORD-2024-88417 total", before, limit: 100 })
      const upTo = yield* search(needle + 1)
      assert.strictEqual(upTo[0]?.seq, needle)
      assert.isTrue(upTo.every((hit) => hit.seq <= needle))
      const without = yield* search(needle)
      assert.isFalse(seqsOf(without).includes(needle))
      assert.isTrue(without.every((hit) => hit.seq < needle))
      assert.strictEqual(without.length, needle - 2)
      assert.deepStrictEqual(yield* search(1), [])
      assert.deepStrictEqual(yield* search(0), [])
      // Every distractor holds "total", "ORD" and "2024"; of the needles, only the order's.
      assert.strictEqual((yield* search(lastSeq + 1000)).length, 57)
    }))

  it.effect("at most `limit` hits, best first", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("search")
      yield* store.repository.appendMessages(
        id,
        Array.makeBy(30, (i) => newMessage("user", `pallet ${i} ${"pallet ".repeat(i % 4)}goes to dock ${i}`))
      )
      const search = (limit: number) => store.index.searchMessages(id, { text: "pallet", before: 100, limit })
      assert.strictEqual((yield* search(1)).length, 1)
      assert.strictEqual((yield* search(7)).length, 7)
      const all = yield* search(100)
      assert.deepStrictEqual(seqsOf(all).sort((x, y) => x - y), Array.range(1, 30))
      for (let i = 1; i < all.length; i++) assert.isAtMost(all[i]?.score ?? 0, all[i - 1]?.score ?? 0)
      // The term counts: a message that says "pallet" four times ranks above one that says it once.
      assert.strictEqual((all[0]?.seq ?? 0) % 4, 0)
    }))

  it.effect.prop(
    "never a message of another conversation, and every message of this one that holds a query word",
    {
      a: fc.array(sentence([...sharedWords, ...wordsOfA]), { minLength: 1, maxLength: 16 }),
      b: fc.array(sentence([...sharedWords, ...wordsOfB]), { minLength: 1, maxLength: 16 }),
      query: fc.array(fc.constantFrom(...sharedWords, ...wordsOfA, ...wordsOfB), { minLength: 1, maxLength: 5 })
    },
    ({ a, b, query }) =>
      Effect.gen(function*() {
        const store = yield* Store.get
        const idA = freshId("search-a")
        const idB = freshId("search-b")
        // Interleaved writes, so the two conversations' seqs overlap.
        for (let i = 0; i < Math.max(a.length, b.length); i++) {
          const nextA = a[i]
          const nextB = b[i]
          if (nextA !== undefined) yield* store.repository.appendMessages(idA, [newMessage("user", nextA)])
          if (nextB !== undefined) yield* store.repository.appendMessages(idB, [newMessage("assistant", nextB)])
        }
        const text = `what about ${query.join(", ")}?`
        const hits = yield* store.index.searchMessages(idA, { text, before: 1000, limit: 100 })
        const byQuery = new Set(query)
        const ofA = yield* contents(idA)
        const expected = [...ofA].filter(([, content]) => [...wordsOf(content)].some((w) => byQuery.has(w)))
          .map(([seq]) => seq)
        assert.deepStrictEqual(seqsOf(hits).sort((x, y) => x - y), expected)
        for (const hit of hits) {
          assert.isAbove(hit.score, 0)
          const words = wordsOf(ofA.get(hit.seq) ?? "")
          assert.isTrue([...words].some((w) => byQuery.has(w)), `hit ${hit.seq} holds no query word`)
        }
        // Words of the other conversation only: nothing.
        const onlyB = query.filter((w) => wordsOfB.includes(w))
        if (onlyB.length > 0) {
          assert.deepStrictEqual(
            yield* store.index.searchMessages(idA, { text: onlyB.join(" "), before: 1000, limit: 100 }),
            []
          )
        }
        yield* store.repository.deleteConversation(idA)
        yield* store.repository.deleteConversation(idB)
      }),
    { fastCheck: { numRuns: 25 } }
  )

  it.effect("an unknown or deleted conversation has no hits", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("search")
      const query = { text: "ORD-2024-88417", before: 100, limit: 10 }
      assert.deepStrictEqual(yield* store.index.searchMessages(id, query), [])
      yield* store.repository.appendMessages(id, [newMessage("user", "where is ORD-2024-88417?")])
      assert.deepStrictEqual(seqsOf(yield* store.index.searchMessages(id, query)), [1])
      yield* store.repository.deleteConversation(id)
      assert.deepStrictEqual(yield* store.index.searchMessages(id, query), [])
      // Written again under the same id: only the new messages.
      yield* store.repository.appendMessages(id, [
        newMessage("user", "nothing about orders"),
        newMessage("user", "ORD-2024-88417")
      ])
      assert.deepStrictEqual(seqsOf(yield* store.index.searchMessages(id, query)), [2])
    }))

  it.effect("a query of stop words or punctuation has no hits; hostile query texts are safe", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("search")
      yield* store.repository.appendMessages(id, [
        newMessage("user", "What is the status of the pallet, and where is it now?"),
        newMessage("assistant", "The pallet is at dock 7; it is not here yet.")
      ])
      const search = (text: string) => store.index.searchMessages(id, { text, before: 100, limit: 10 })
      for (
        const text of ["", "   ", "the of and to is it", "What is it, and where is it now?", "?!.,;:-- ()[]{} ''\"\""]
      ) {
        assert.deepStrictEqual(yield* search(text), [], JSON.stringify(text))
      }
      const hostile = [
        "'); DROP TABLE chat_memory_messages; --",
        "x' OR '1'='1",
        "a & b | !c",
        "(pallet:* <-> dock) & !(x | y)",
        "&|!():*<->",
        "'pallet' | !dock",
        "\\",
        "\\\\'",
        "pallet\\ dock\\'",
        "$1 $2 $$ %s ? :: ;",
        "\"pallet\" 'dock'",
        "pallet\u0001\u001f\u007f",
        "emoji 🧊 👩🏽‍💻 e\u0301 \ufeff",
        "a".repeat(3000),
        "pallet-".repeat(5000),
        `${"word ".repeat(50_000)}pallet`,
        Array.makeBy(500, (i) => `term${i}`).join(" ")
      ]
      for (const text of hostile) {
        const result = yield* Effect.either(search(text))
        assert.isTrue(Either.isRight(result), `${text.slice(0, 40)}: ${JSON.stringify(result).slice(0, 300)}`)
      }
      // The words of a hostile text still count.
      assert.deepStrictEqual(seqsOf(yield* search("'pallet' | !dock")).sort(), [1, 2])
      assert.deepStrictEqual(seqsOf(yield* search("(dock:* <-> 7)")), [2])
    }))

  it.effect("summary messages, leading system messages and pruned messages are never hits", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("search")
      yield* store.repository.appendMessages(id, [
        newMessage("system", "Escalate ZETA-991 cases to a manager."),
        newMessage("system", "ZETA-991 is the refund policy code."),
        newMessage("user", "Hello, a question about ZETA-991."),
        newMessage("assistant", "Sure, ZETA-991 applies."),
        newMessage("system", "Reminder: ZETA-991 needs a receipt."),
        newMessage("user", "Here is my receipt for ZETA-991."),
        newMessage("assistant", "Thanks, ZETA-991 approved.")
      ])
      const search = () => store.index.searchMessages(id, { text: "ZETA-991", before: 100, limit: 100 })
      assert.deepStrictEqual(seqsOf(yield* search()).sort(), [3, 4, 5, 6, 7])
      const committed = yield* store.summaries.commitSummary({
        conversationId: id,
        expected: { cursor: 0, version: 0 },
        narrative: "ZETA-991 was discussed.",
        facts: [],
        cursor: 4,
        record: testRecord(3, 4, "ZETA-991 was discussed."),
        summaryMessage: { content: "Summary: ZETA-991 was discussed.", tokenCount: 8 },
        prune: true
      })
      assert.strictEqual(committed._tag, "Committed")
      // Seq 8 is the summary message; 3 and 4 were pruned.
      assert.deepStrictEqual(seqsOf(yield* search()).sort(), [5, 6, 7])
      yield* store.repository.appendMessages(id, [newMessage("user", "ZETA-991 again")])
      assert.deepStrictEqual(seqsOf(yield* search()).sort(), [5, 6, 7, 9])
    }))

  it.effect("a message of 50,000 distinct words is stored, and found by its first words", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("search")
      const letters = "abcdefghijklmnopqrstuvwxyz"
      const word = (i: number) =>
        `${letters[Math.floor(i / 17_576) % 26]}${letters[Math.floor(i / 676) % 26]}${
          letters[Math.floor(i / 26) % 26]
        }${letters[i % 26]}x`
      const words = Array.makeBy(50_000, word)
      yield* store.repository.appendMessages(id, [newMessage("tool", words.join(" ")), newMessage("user", "bbbbx")])
      assert.deepStrictEqual(seqsOf(yield* store.index.searchMessages(id, { text: "aaabx", before: 10, limit: 5 })), [
        1
      ])
      assert.deepStrictEqual(seqsOf(yield* store.index.searchMessages(id, { text: "bbbbx", before: 10, limit: 5 })), [
        2
      ])
    }))

  it.effect("tool results are found by their content, tool calls by their params", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const id = freshId("search")
      yield* store.repository.appendMessages(id, [
        newMessage("user", "Can you check my last order?"),
        newMessage("assistant", "Let me look that up.", {
          toolCalls: [{ id: "call_1", name: "lookup_order", params: { orderId: "ORD-7731-KX", verbose: true } }]
        }),
        newMessage("tool", "{\"status\":\"shipped\",\"tracking\":\"1Z999AA10123456784\",\"eta\":\"2026-05-02\"}", {
          toolCallId: "call_1",
          toolName: "lookup_order"
        }),
        newMessage("assistant", "It has shipped and should arrive soon."),
        ...Array.makeBy(20, (i) => newMessage(i % 2 === 0 ? "user" : "assistant", `Order question ${i}: shipped?`))
      ])
      const search = (text: string) => store.index.searchMessages(id, { text, before: 100, limit: 5 })
      assert.strictEqual((yield* search("what happened with ORD-7731-KX?"))[0]?.seq, 2)
      assert.strictEqual((yield* search("tracking number 1Z999AA10123456784"))[0]?.seq, 3)
      assert.strictEqual((yield* search("is it still arriving 2026-05-02?"))[0]?.seq, 3)
    }))
}
