/**
 * The contract of the user port (`UserStore`) and of a conversation's user in the log: binding on
 * the first write that names a user, refusal of another, facts merged by the time they were said
 * (in any order), the facts cursor, the list, the search and the turns across a user's
 * conversations, erasure, and isolation between users whose ids look alike.
 */
import { assert, type Vitest } from "@effect/vitest"
import { DateTime, Effect, Either, FastCheck as fc, Schema } from "effect"
import type { ConversationId } from "../../src/domain/ConversationId.js"
import type { Role } from "../../src/domain/Message.js"
import { UserFact } from "../../src/domain/UserFact.js"
import * as UserId from "../../src/domain/UserId.js"

const userId = Schema.decodeSync(UserId.UserId)
import * as Store from "../../src/layers/store/Store.js"
import { freshId, newMessage } from "../fixtures/messages.js"

/** A user id no other test uses. */
export const freshUser = (prefix = "user"): UserId.UserId => userId(`${prefix}-${freshId()}`)

/** A message said at `minute` minutes past the epoch of the test's day. */
const said = (role: Role, content: string, minute: number) => ({
  ...newMessage(role, content),
  createdAt: DateTime.unsafeMake(Date.UTC(2026, 0, 1, 0, minute))
})

/** A fact about a user said at `minute` (from the app: no source). */
const fact = (key: string, value: string | null, minute: number) =>
  new UserFact({
    key,
    value,
    category: "ENTITY",
    saidAt: DateTime.unsafeMake(Date.UTC(2026, 0, 1, 0, minute)),
    source: null
  })

/**
 * Ids that look like `id` and are others: case, Unicode normalisation, whitespace, a prefix or a
 * suffix, another separator.
 */
export const lookalikes = (id: string): ReadonlyArray<string> =>
  [
    id.toUpperCase(),
    id.toLowerCase(),
    `${id} `,
    ` ${id}`,
    `${id}-1`,
    id.slice(0, -1),
    id.replaceAll("-", "_"),
    id.replaceAll("-", ":"),
    `${id}\u0301`,
    id.normalize("NFD") === id ? `${id}e\u0301` : id.normalize("NFD")
  ].filter((other) => other !== id && other.length > 0)

/** Registers the user port's tests in a contract suite. */
export const userStoreContract = (it: Vitest.MethodsNonLive<Store.Ports>) => {
  it.effect("a conversation is bound on its first write that names a user; another user is refused, nothing stored", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const [ana, bo] = [freshUser("ana"), freshUser("bo")]
      const id = freshId("bound")
      yield* store.repository.appendMessages(id, [said("user", "Hi, I am Ana", 1)], { userId: ana })
      assert.strictEqual((yield* store.repository.getConversation(id)).userId, ana)
      const refused = yield* Effect.flip(
        store.repository.appendMessages(id, [said("user", "I am Bo", 2)], { userId: bo })
      )
      assert.strictEqual(refused._tag, "DataValidationError")
      assert.include(refused.message, "userId")
      // Nothing of the refused call was stored; a write without a user keeps the binding.
      assert.strictEqual((yield* store.repository.getConversation(id)).messageCount, 1)
      yield* store.repository.appendMessages(id, [said("assistant", "Hello Ana", 3)])
      const info = yield* store.repository.getConversation(id)
      assert.deepStrictEqual([info.userId, info.messageCount], [ana, 2])
      assert.deepStrictEqual((yield* store.users.listConversations(bo, { limit: 10 })).length, 0)
    }))

  it.effect("a conversation written without a user is its user's from the first write that names one", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const ana = freshUser("ana")
      const id = freshId("legacy")
      yield* store.repository.appendMessages(id, [said("user", "an old conversation", 1)])
      assert.isNull((yield* store.repository.getConversation(id)).userId)
      assert.isEmpty(yield* store.users.listConversations(ana, { limit: 10 }))
      yield* store.repository.appendMessages(id, [said("assistant", "and its answer", 2)], { userId: ana })
      assert.strictEqual((yield* store.repository.getConversation(id)).userId, ana)
      const listed = yield* store.users.listConversations(ana, { limit: 10 })
      assert.deepStrictEqual(listed.map((entry) => [entry.conversationId, entry.messageCount]), [[id, 2]])
      // Its earlier messages are the user's too: found by a search of the user's conversations.
      const hits = yield* store.users.searchMessages(ana, { text: "old conversation", limit: 5 })
      assert.deepStrictEqual(hits.map((hit) => [hit.conversationId, hit.seq]), [[id, 1]])
    }))

  it.effect("facts merge by the time they were said, in whatever order they are merged", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const statements = [
        fact("city", "Lisbon", 1),
        fact("city", "Porto", 5),
        fact("dog", "Pixel", 2),
        fact("budget", "€3,000", 3),
        fact("budget", null, 7),
        fact("phone", "07700 900461", 4)
      ]
      // The latest said first.
      const expected = [["city", "Porto"], ["phone", "07700 900461"], ["dog", "Pixel"]]
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.shuffledSubarray(statements, { minLength: statements.length }), (order) =>
            Effect.runPromise(Effect.gen(function*() {
              const user = freshUser("merge")
              // In two merges, in the order drawn: the result is the same.
              yield* store.users.mergeFacts(user, order.slice(0, 3))
              yield* store.users.mergeFacts(user, order.slice(3))
              const facts = yield* store.users.getFacts(user)
              assert.deepStrictEqual(facts.map((f) => [f.key, f.value]), expected)
            }))),
          { numRuns: 20 }
        )
      )
    }))

  it.effect("a removal stays: an older statement merged later does not bring the fact back", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const user = freshUser("removal")
      yield* store.users.mergeFacts(user, [fact("order", "ORD-1", 1)])
      yield* store.users.mergeFacts(user, [fact("order", null, 5)])
      const late = yield* store.users.mergeFacts(user, [fact("order", "ORD-1", 3)])
      assert.deepStrictEqual(late._tag === "Merged" ? late.applied.length : -1, 0)
      assert.isEmpty(yield* store.users.getFacts(user))
      // A statement said after the removal is known again.
      yield* store.users.mergeFacts(user, [fact("order", "ORD-2", 9)])
      assert.deepStrictEqual((yield* store.users.getFacts(user)).map((f) => f.value), ["ORD-2"])
    }))

  it.effect("a merge with the conversation's facts cursor applies once: a stale cursor changes nothing", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const user = freshUser("cursor")
      const id = freshId("cursor")
      yield* store.repository.appendMessages(id, [said("user", "my dog is Pixel", 1)], { userId: user })
      const first = yield* store.users.mergeFacts(user, [fact("dog", "Pixel", 1)], {
        conversationId: id,
        expected: 0,
        next: 1
      })
      assert.strictEqual(first._tag, "Merged")
      assert.strictEqual((yield* store.repository.getConversation(id)).factsCursor, 1)
      const again = yield* store.users.mergeFacts(user, [fact("dog", "Rex", 2)], {
        conversationId: id,
        expected: 0,
        next: 1
      })
      assert.strictEqual(again._tag, "Stale")
      assert.deepStrictEqual((yield* store.users.getFacts(user)).map((f) => f.value), ["Pixel"])
      // Another user's cursor on the conversation is stale too: the conversation is not theirs.
      const other = yield* store.users.mergeFacts(freshUser("other"), [fact("dog", "Rex", 2)], {
        conversationId: id,
        expected: 1,
        next: 2
      })
      assert.strictEqual(other._tag, "Stale")
    }))

  it.effect("the list with factsPending: only the user's conversations with messages past their facts cursor", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const [user, other] = [freshUser("pending"), freshUser("pending")]
      const [read, unread, later, others] = [freshId("read"), freshId("unread"), freshId("later"), freshId("others")]
      yield* store.repository.appendMessages(read, [said("user", "my dog is Pixel", 1)], { userId: user })
      yield* store.repository.appendMessages(unread, [said("user", "my cat is Tom", 2)], { userId: user })
      yield* store.repository.appendMessages(later, [said("user", "I live in Lyon", 3)], { userId: user })
      yield* store.repository.appendMessages(others, [said("user", "my dog is Rex", 4)], { userId: other })
      yield* store.users.mergeFacts(user, [fact("dog", "Pixel", 1)], { conversationId: read, expected: 0, next: 1 })
      yield* store.users.mergeFacts(user, [fact("city", "Lyon", 3)], { conversationId: later, expected: 0, next: 1 })
      const pending = (limit: number) => store.users.listConversations(user, { limit, factsPending: true })
      assert.deepStrictEqual((yield* pending(10)).map((entry) => entry.conversationId), [unread])
      // A message past the cursor makes the conversation pending again, listed the latest said first.
      yield* store.repository.appendMessages(later, [said("assistant", "Noted: Lyon", 5)])
      assert.deepStrictEqual((yield* pending(10)).map((entry) => entry.conversationId), [later, unread])
      assert.deepStrictEqual((yield* pending(1)).map((entry) => entry.conversationId), [later])
      assert.lengthOf(yield* store.users.listConversations(user, { limit: 10 }), 3)
    }))

  it.effect("facts read before an erasure never merge into the conversation written again", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const user = freshUser("again")
      const id = freshId("again")
      yield* store.repository.appendMessages(id, [said("user", "my passport is XP-998877", 1)], { userId: user })
      const read = yield* store.repository.getConversation(id)
      yield* store.users.erase(user)
      yield* store.repository.appendMessages(id, [said("user", "hello again", 5)], { userId: user })
      const now = yield* store.repository.getConversation(id)
      assert.notStrictEqual(now.incarnation, read.incarnation)
      // The same facts cursor as the stale read: only the incarnation tells them apart.
      const cursor = { conversationId: id, expected: read.factsCursor, next: 1 }
      const stale = yield* store.users.mergeFacts(user, [fact("passport", "XP-998877", 1)], {
        ...cursor,
        incarnation: read.incarnation
      })
      assert.strictEqual(stale._tag, "Stale")
      assert.isEmpty(yield* store.users.getFacts(user))
      assert.strictEqual((yield* store.repository.getConversation(id)).factsCursor, 0)
      const merged = yield* store.users.mergeFacts(user, [fact("greeting", "hello again", 5)], {
        ...cursor,
        incarnation: now.incarnation
      })
      assert.strictEqual(merged._tag, "Merged")
      assert.deepStrictEqual((yield* store.users.getFacts(user)).map((f) => f.value), ["hello again"])
    }))

  it.effect("the list: the user's conversations, the latest said first, paged by `before`", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const user = freshUser("list")
      const ids: Array<ConversationId> = []
      for (let i = 0; i < 4; i++) {
        const id = freshId(`list-${i}`)
        ids.push(id)
        yield* store.repository.appendMessages(id, [said("user", `conversation ${i} is about topic ${i}`, i)], {
          userId: user
        })
      }
      yield* store.repository.appendMessages(freshId("someone-else"), [said("user", "not theirs", 9)], {
        userId: freshUser("else")
      })
      const all = yield* store.users.listConversations(user, { limit: 10 })
      assert.deepStrictEqual(all.map((entry) => entry.conversationId), [...ids].reverse())
      assert.strictEqual(all[0]?.about, "conversation 3 is about topic 3")
      assert.strictEqual(all[0]?.lastSaidAt.epochMillis, Date.UTC(2026, 0, 1, 0, 3))
      const page = yield* store.users.listConversations(user, { limit: 2 })
      const last = page[page.length - 1]
      assert.isDefined(last)
      const next = last === undefined
        ? []
        : yield* store.users.listConversations(user, { limit: 10, before: last.lastSaidAt })
      assert.deepStrictEqual([...page, ...next].map((entry) => entry.conversationId), [...ids].reverse())
    }))

  it.effect("the list pages by `after` with no conversation skipped or repeated, however many were said at once", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const user = freshUser("ties")
      const ids: Array<ConversationId> = []
      // Seven conversations, five of them said at the same minute (an import, say).
      for (const [i, minute] of [5, 5, 5, 5, 5, 3, 8].entries()) {
        const id = freshId(`tie-${i}`)
        ids.push(id)
        yield* store.repository.appendMessages(id, [said("user", `conversation ${i}`, minute)], { userId: user })
      }
      const all = yield* store.users.listConversations(user, { limit: 10 })
      assert.lengthOf(all, 7)
      for (const size of [1, 2, 3]) {
        const pages: Array<ConversationId> = []
        let after: { readonly lastSaidAt: DateTime.Utc; readonly conversationId: ConversationId } | undefined
        for (let n = 0; n < 10; n++) {
          const page = yield* store.users.listConversations(user, { limit: size, after })
          pages.push(...page.map((entry) => entry.conversationId))
          after = page.at(-1)
          if (after === undefined) break
        }
        assert.deepStrictEqual(pages, all.map((entry) => entry.conversationId), `pages of ${size}`)
      }
    }))

  it.effect("a conversation is about its first user message past its system prompt, however far in", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const user = freshUser("about")
      const [prompted, late, silent, current] = [
        freshId("prompted"),
        freshId("late"),
        freshId("silent"),
        freshId("now")
      ]
      const bound = { userId: user }
      yield* store.repository.appendMessages(prompted, [
        said("system", "You are a plumber's assistant.", 1),
        said("user", "The boiler leaks", 1)
      ], bound)
      yield* store.repository.appendMessages(late, [
        ...Array.from({ length: 10 }, (_, i) => said("assistant", `Notice ${i}`, 2)),
        said("user", "About the invoice", 2)
      ], bound)
      yield* store.repository.appendMessages(silent, [said("assistant", "Nobody answered", 3)], bound)
      yield* store.repository.appendMessages(current, [said("user", "Today", 4)], bound)
      const expected = [["silent", ""], ["late", "About the invoice"], ["prompted", "The boiler leaks"]]
      const named = (entries: ReadonlyArray<{ readonly conversationId: ConversationId; readonly about: string }>) =>
        entries.map((entry) => [
          entry.conversationId === prompted ? "prompted" : entry.conversationId === late ? "late" : "silent",
          entry.about
        ])
      const listed = yield* store.users.listConversations(user, { limit: 10 })
      assert.deepStrictEqual(named(listed.filter((entry) => entry.conversationId !== current)), expected)
      const window = yield* store.repository.readWindow(current, {
        after: "system-prefix",
        tokenLimit: 1000,
        digest: 5
      })
      assert.deepStrictEqual(named(window.user?.digest ?? []), expected)
      // Cut at 200 characters, a character outside the Basic Multilingual Plane counted once.
      const emoji = freshId("emoji")
      yield* store.repository.appendMessages(emoji, [said("user", `${"a".repeat(199)}\u{1F600} and more`, 0)], bound)
      const [cut] = yield* store.users.listConversations(user, { limit: 1, before: listed.at(-1)?.lastSaidAt })
      assert.strictEqual(cut?.about, `${"a".repeat(199)}\u{1F600}`)
    }))

  it.effect("the search spans the user's conversations, and the current one only below `before`", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const user = freshUser("search")
      const [earlier, current] = [freshId("earlier"), freshId("current")]
      yield* store.repository.appendMessages(earlier, [
        said("user", "My order ORD-2024-88417 never arrived", 1),
        said("assistant", "I am sorry about ORD-2024-88417", 2)
      ], { userId: user })
      yield* store.repository.appendMessages(current, [
        said("user", "Is there news on ORD-2024-88417?", 3),
        said("assistant", "Checking ORD-2024-88417 now", 4)
      ], { userId: user })
      yield* store.repository.appendMessages(freshId("stranger"), [said("user", "ORD-2024-88417 is mine", 5)], {
        userId: freshUser("stranger")
      })
      const hits = yield* store.users.searchMessages(user, {
        text: "ORD-2024-88417",
        limit: 10,
        current: { conversationId: current, before: 2 }
      })
      const found = hits.map((hit) => `${hit.conversationId === earlier ? "earlier" : "current"}:${hit.seq}`).sort()
      assert.deepStrictEqual(found, ["current:1", "earlier:1", "earlier:2"])
      const turns = yield* store.users.readTurns(user, { hits, limit: 10 })
      assert.deepStrictEqual(
        turns.map((turn) => [turn.conversationId === earlier ? "earlier" : "current", turn.messages.map((m) => m.seq)])
          .sort(),
        [["current", [1, 2]], ["earlier", [1, 2]]]
      )
      // Another user's hits name turns this user cannot read.
      assert.isEmpty(yield* store.users.readTurns(freshUser("stranger"), { hits, limit: 10 }))
    }))

  it.effect("the search by meaning spans the user's conversations, the current one only below `before`", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const [user, stranger] = [freshUser("meaning"), freshUser("meaning-stranger")]
      const [earlier, current, strangers] = [freshId("earlier"), freshId("current"), freshId("strangers")]
      const model = "test-embedding"
      yield* store.repository.appendMessages(earlier, [
        said("user", "my sedan stalled on the motorway", 1),
        said("assistant", "sorry to hear that", 2)
      ], { userId: user })
      yield* store.repository.appendMessages(current, [
        said("user", "the car broke down again", 3),
        said("assistant", "the same car?", 4)
      ], { userId: user })
      yield* store.repository.appendMessages(strangers, [said("user", "my car is fine", 5)], { userId: stranger })
      yield* store.repository.appendMessages(freshId("nobody"), [said("user", "a car without a user", 6)])
      // Axis 0 is "car trouble"; the others are orthogonal to it.
      yield* store.index.storeEmbeddings(earlier, model, [{ seq: 1, vector: [1, 0, 0] }, { seq: 2, vector: [0, 1, 0] }])
      yield* store.index.storeEmbeddings(current, model, [
        { seq: 1, vector: [0.8, 0.6, 0] },
        { seq: 2, vector: [0.6, 0, 0.8] }
      ])
      yield* store.index.storeEmbeddings(strangers, model, [{ seq: 1, vector: [1, 0, 0] }])
      // Another model's vectors, and one of another length, are never compared.
      yield* store.index.storeEmbeddings(earlier, "other-model", [{ seq: 2, vector: [1, 0, 0] }])
      const hits = yield* store.users.searchEmbeddings(user, {
        model,
        vector: [2, 0, 0],
        limit: 10,
        scanLimit: 1000,
        current: { conversationId: current, before: 2 }
      })
      const named = (hit: { readonly conversationId: ConversationId; readonly seq: number }) =>
        `${
          hit.conversationId === earlier ? "earlier" : hit.conversationId === current ? "current" : "other"
        }:${hit.seq}`
      // Best first; the current conversation's seq 2 is at `before`, so left out.
      assert.deepStrictEqual(hits.map(named), ["earlier:1", "current:1", "earlier:2"])
      assert.closeTo(hits[0]?.score ?? 0, 1, 1e-5)
      assert.closeTo(hits[1]?.score ?? 0, 0.8, 1e-5)
      // Without a current conversation, every conversation is searched whole; `limit` cuts.
      const all = yield* store.users.searchEmbeddings(user, { model, vector: [1, 0, 0], limit: 3, scanLimit: 1000 })
      assert.deepStrictEqual(all.map(named), ["earlier:1", "current:1", "current:2"])
      // `scanLimit` covers the newest seqs of the conversations said last: here the current
      // conversation's two, then the earlier one's newest.
      const scanned = (scanLimit: number) =>
        Effect.map(
          store.users.searchEmbeddings(user, { model, vector: [1, 0, 0], limit: 10, scanLimit }),
          (found) => found.map(named)
        )
      assert.deepStrictEqual(yield* scanned(2), ["current:1", "current:2"])
      assert.deepStrictEqual(yield* scanned(3), ["current:1", "current:2", "earlier:2"])
      // Below 1, or not a number, it is 1; past every seq, it covers them all.
      for (const odd of [0, -5, Number.NaN]) assert.deepStrictEqual(yield* scanned(odd), ["current:2"])
      assert.lengthOf(yield* scanned(Number.POSITIVE_INFINITY), 4)
      assert.isEmpty(yield* store.users.searchEmbeddings(user, { model, vector: [1, 0], limit: 10, scanLimit: 1000 }))
      assert.isEmpty(
        yield* store.users.searchEmbeddings(user, { model: "unknown", vector: [1, 0, 0], limit: 10, scanLimit: 1000 })
      )
      assert.isEmpty(
        yield* store.users.searchEmbeddings(user, { model, vector: [0, 0, 0], limit: 10, scanLimit: 1000 })
      )
      // The stranger finds only their own.
      const theirs = yield* store.users.searchEmbeddings(stranger, {
        model,
        vector: [1, 0, 0],
        limit: 10,
        scanLimit: 1000
      })
      assert.deepStrictEqual(theirs.map((hit) => [hit.conversationId, hit.seq]), [[strangers, 1]])
      // Erased, the user's vectors are gone with the rest.
      yield* store.users.erase(user)
      assert.isEmpty(
        yield* store.users.searchEmbeddings(user, { model, vector: [1, 0, 0], limit: 10, scanLimit: 1000 })
      )
    }))

  it.effect("a user's conversation's window carries the facts about the user and the user's other conversations", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const user = freshUser("window")
      const [older, id] = [freshId("older"), freshId("window")]
      yield* store.repository.appendMessages(older, [said("user", "about the boiler", 1)], { userId: user })
      yield* store.repository.appendMessages(id, [said("user", "today's question", 2)], { userId: user })
      yield* store.users.mergeFacts(user, [fact("boiler", "diverter valve", 1)])
      const window = yield* store.repository.readWindow(id, { after: "system-prefix", tokenLimit: 1000, digest: 5 })
      assert.deepStrictEqual(window.user?.facts.map((f) => f.value), ["diverter valve"])
      assert.deepStrictEqual(window.user?.digest.map((entry) => entry.conversationId), [older])
      const plain = freshId("plain")
      yield* store.repository.appendMessages(plain, [said("user", "no user", 3)])
      assert.isNull((yield* store.repository.readWindow(plain, { after: "system-prefix", tokenLimit: 1000 })).user)
    }))

  it.effect("the window read of a conversation not stored yet, naming a user, is a new conversation of that user", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const [user, other] = [freshUser("named"), freshUser("named-other")]
      const [older, otherConversation] = [freshId("named-older"), freshId("named-stranger")]
      yield* store.repository.appendMessages(older, [said("user", "about the boiler", 1)], { userId: user })
      yield* store.repository.appendMessages(otherConversation, [said("user", "not yours", 2)], { userId: other })
      yield* store.users.mergeFacts(user, [fact("boiler", "diverter valve", 1)])
      yield* store.users.mergeFacts(other, [fact("secret", "the other's", 2)])
      const query = { after: "system-prefix", tokenLimit: 1000, digest: 5 } as const
      const fresh = freshId("named-new")
      const window = yield* store.repository.readWindow(fresh, { ...query, userId: user })
      assert.strictEqual(window.info.lastSeq, 0)
      assert.strictEqual(window.info.messageCount, 0)
      assert.strictEqual(window.info.userId, user)
      assert.isEmpty(window.recent)
      assert.isEmpty(window.system)
      assert.isTrue(window.reachedStart)
      assert.deepStrictEqual(window.user?.facts.map((f) => f.value), ["diverter valve"])
      assert.deepStrictEqual(window.user?.digest.map((entry) => entry.conversationId), [older])
      // Nothing is stored by the read.
      const missing = yield* Effect.flip(store.repository.readWindow(fresh, query))
      assert.strictEqual(missing._tag, "ConversationNotFoundError")
      // A stored conversation reads as its own, whoever the query names.
      const own = yield* store.repository.readWindow(otherConversation, { ...query, userId: user })
      assert.strictEqual(own.info.userId, other)
      assert.deepStrictEqual(own.user?.facts.map((f) => f.value), ["the other's"])
      assert.isEmpty(own.user?.digest ?? [])
    }))

  it.effect("erasing a user removes every conversation, message and fact of the user, and nothing else", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const [user, other] = [freshUser("erase"), freshUser("keep")]
      const [a, b, kept] = [freshId("erase-a"), freshId("erase-b"), freshId("keep")]
      yield* store.repository.appendMessages(a, [said("user", "secret one", 1), said("assistant", "ok", 2)], {
        userId: user
      })
      yield* store.repository.appendMessages(b, [said("user", "secret two", 3)], { userId: user })
      yield* store.repository.appendMessages(kept, [said("user", "secret one too", 4)], { userId: other })
      yield* store.users.mergeFacts(user, [fact("secret", "one", 1), fact("gone", null, 2)])
      yield* store.users.mergeFacts(other, [fact("secret", "kept", 1)])
      const erased = yield* store.users.erase(user)
      assert.deepStrictEqual(
        [erased.userId, erased.conversations, erased.messages, erased.facts],
        [user, 2, 3, 1]
      )
      for (const id of [a, b]) {
        assert.strictEqual((yield* Effect.flip(store.repository.getConversation(id)))._tag, "ConversationNotFoundError")
      }
      assert.isEmpty(yield* store.users.getFacts(user))
      assert.isEmpty(yield* store.users.listConversations(user, { limit: 10 }))
      assert.isEmpty(yield* store.users.searchMessages(user, { text: "secret", limit: 10 }))
      // The other user is untouched.
      assert.strictEqual((yield* store.repository.getConversation(kept)).messageCount, 1)
      assert.deepStrictEqual((yield* store.users.getFacts(other)).map((f) => f.value), ["kept"])
      const again = yield* store.users.erase(user)
      assert.deepStrictEqual([again.conversations, again.messages, again.facts], [0, 0, 0])
    }))

  it.effect("users whose ids look alike see nothing of each other", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const base = `Ana-${freshId()}`
      const user = userId(base)
      const id = freshId("alike")
      yield* store.repository.appendMessages(id, [said("user", "Ana's address is 12 Rua Augusta", 1)], { userId: user })
      yield* store.users.mergeFacts(user, [fact("address", "12 Rua Augusta", 1)])
      yield* store.index.storeEmbeddings(id, "alike", [{ seq: 1, vector: [1, 0] }])
      assert.lengthOf(
        yield* store.users.searchEmbeddings(user, { model: "alike", vector: [1, 0], limit: 10, scanLimit: 1000 }),
        1
      )
      for (const alike of lookalikes(base)) {
        const decoded = Either.getOrUndefined(Either.try(() => userId(alike)))
        if (decoded === undefined) continue
        assert.isEmpty(yield* store.users.getFacts(decoded), alike)
        assert.isEmpty(yield* store.users.listConversations(decoded, { limit: 10 }), alike)
        assert.isEmpty(yield* store.users.searchMessages(decoded, { text: "Rua Augusta address", limit: 10 }), alike)
        assert.isEmpty(
          yield* store.users.searchEmbeddings(decoded, { model: "alike", vector: [1, 0], limit: 10, scanLimit: 1000 }),
          alike
        )
        assert.isEmpty(yield* store.users.readTurns(decoded, { hits: [{ conversationId: id, seq: 1 }], limit: 5 }))
        const refused = yield* Effect.either(
          store.repository.appendMessages(id, [said("user", "mine?", 2)], { userId: decoded })
        )
        assert.isTrue(Either.isLeft(refused), alike)
        const erased = yield* store.users.erase(decoded)
        assert.strictEqual(erased.conversations, 0)
      }
      assert.deepStrictEqual((yield* store.users.getFacts(user)).map((f) => f.value), ["12 Rua Augusta"])
      assert.strictEqual((yield* store.repository.getConversation(id)).messageCount, 1)
    }))
}
