/**
 * User-scoped contexts at scale: a user with 100 conversations of 200
 * messages each, and `getContext` with a query on one of the user's conversations and on a new
 * conversation of the user (what is known about the user, the digest of the user's conversations,
 * recall across all of them), against `getContext` with the same query on a conversation of the same
 * size without a user (recall over that conversation alone), timed in the same loop on each store.
 * The same user-scoped calls run on two databases side by side: one that holds that user alone, and
 * one that also holds 9,999 other users (each with a small conversation and facts of their own), so
 * that what a user-scoped statement reads is shown not to grow with the number of users. On the SQL
 * stores, the statements each context sends are counted too.
 *
 * Goals: user-scoped / conversation-scoped ≤ 1.5x, 10,000 users / 1 user ≈ 1.0x, at most 3 round
 * trips per context (for both the existing and the new conversation).
 */
import { DateTime, Effect } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import type { MemoryContext } from "../src/domain/MemoryContext.js"
import type { NewMessage } from "../src/domain/Message.js"
import { UserFact } from "../src/domain/UserFact.js"
import * as UserId from "../src/domain/UserId.js"
import type * as Store from "../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { type ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { countedMemory, type Counter } from "./roundTrips.js"
import { type BenchStore, budget, scaled, seedSummary, type Settings } from "./setup.js"
import { type Figure, fixed, int, interleaved, ms, printTable, ratio, timed, times } from "./stats.js"
import { generatedTurn, pick } from "./texts.js"

/** The user's history: conversations, and messages in each. */
const conversations = 100
const messagesPerConversation = 200
/** Users in the larger database (the measured one among them). */
const users = 10_000
/** Messages of each other user's one conversation, and facts about each. */
const otherMessages = 4
const otherFacts = 3
/** Other users written at once (one append each; the SQL pools run them side by side). */
const seedConcurrency = 16
/** Messages left after the summary cursor of a measured conversation: a summarizer that keeps up. */
const unsummarized = 20

const toUserId = (id: string): UserId.UserId => UserId.UserId.make(id)

/** Day `d` of the history (day 0 is the first), at `minute` past nine. */
const at = (day: number, minute: number) => DateTime.unsafeMake(Date.UTC(2025, 0, 1, 9, minute) + day * 86_400_000)

const topics = [
  "the boiler repair",
  "a flight to Lisbon",
  "the kitchen renovation budget",
  "the dentist appointment",
  "the car insurance renewal",
  "the birthday party catering",
  "the broken laptop screen",
  "the gym membership",
  "the tax return documents",
  "the garden fence quote"
]

/** The order id message `i` of conversation `c` names, when it names one (every fifth message). */
const orderOf = (c: number, i: number) => `ORD-${2020 + (c % 7)}-${String(100_000 + c * 1000 + i).padStart(7, "0")}`

/**
 * Message `i` of conversation `c` of a history: the generated turns of `texts.ts` (15 to 180 words
 * of a small shared vocabulary, distinct per conversation), the first naming the conversation's
 * topic, every fifth an order id, an amount and a due date of its own.
 */
const message = (c: number, i: number, day: number): NewMessage => {
  const turn = generatedTurn(c * 1000 + (i >> 1))[i & 1]
  const opening = i === 0 ? `About ${topics[c % topics.length] ?? "an errand"}: ` : ""
  const details = i % 5 === 0
    ? ` Order ${orderOf(c, i)} totals $${(pick(90_000, c, i) / 100 + 10).toFixed(2)}, due 2026-${
      String(1 + pick(12, c, i, 1)).padStart(2, "0")
    }-${String(1 + pick(28, c, i, 2)).padStart(2, "0")}.`
    : ""
  const content = `${opening}${turn?.content ?? ""}${details}`
  return {
    role: turn?.role ?? "user",
    content,
    metadata: {},
    tokenCount: Math.ceil(content.length / 4),
    createdAt: at(day, Math.min(599, i))
  }
}

const history = (c: number, length: number, day: number): Array<NewMessage> =>
  Array.from({ length }, (_, i) => message(c, i, day))

/** What is known about a user: `count` facts said over the history. */
const factsAbout = (seed: number, count: number): Array<UserFact> =>
  Array.from({ length: count }, (_, k) =>
    new UserFact({
      key: `fact_${k}`,
      value: `${["lives in", "prefers", "owns", "budget", "works at"][k % 5]} ${
        ["Lisbon", "window seats", "a dog named Pixel", "€3,000", "Northwind"][pick(5, seed, k)]
      } (${seed}-${k})`,
      category: "ENTITY",
      saidAt: at(k % conversations, 30),
      source: null
    }))

const words = (
  "delivery order warehouse dock slot invoice customer carrier pallet route schedule refund address window " +
  "driver tracking weather delay priority contract supplier quantity discount confirm tomorrow morning moved"
).split(" ")

const word = (...seed: ReadonlyArray<number>) => words[pick(words.length, ...seed)] ?? "delivery"

/**
 * Query `k`: even ones name an order id of one of the user's conversations (alone, or in a
 * question), odd ones are questions of the conversations' common words. The same text for every
 * call of a round.
 */
export const query = (k: number): string => {
  if (k % 2 === 0) {
    const id = orderOf(pick(conversations, k), 5 * pick(messagesPerConversation / 5, k, 1))
    return k % 4 === 0 ? id : `what was the total for ${id} again, and when is the ${word(k)} due?`
  }
  return `Can you remind me what we said about the ${word(k, 1)} ${word(k, 2)} and the ${word(k, 3)} for the ${
    word(k, 4)
  }?`
}

/** The measured user, the conversation measured among the user's (the latest), and the others. */
export const measuredUser = toUserId("user-00000")
export const userConversation = ConversationId.make(`user-00000-c${conversations - 1}`)
export const newConversation = ConversationId.make("user-00000-new")
export const plainConversation = ConversationId.make("plain-c0")
/** The user's whole history as one conversation without a user: as much to search as the user's scope. */
export const wholeConversation = ConversationId.make("plain-whole")

/** One database of the run: the measured user alone, or among `users` users. */
interface Database {
  readonly users: number
  readonly memory: ChatMemoryService["Type"]
  readonly statements: Counter
  readonly seedSeconds: number
}

/** Seeds one database: the user's conversations, a conversation without a user, and the other users. */
export const seed = (store: Store.Store, userCount: number) =>
  Effect.gen(function*() {
    for (let c = 0; c < conversations; c++) {
      const id = ConversationId.make(`user-00000-c${c}`)
      yield* store.repository.appendMessages(id, history(c, messagesPerConversation, c), { userId: measuredUser })
    }
    yield* store.users.mergeFacts(measuredUser, factsAbout(0, 30))
    // The conversation without a user: the same size, said on the same day as the user's measured one.
    yield* store.repository.appendMessages(
      plainConversation,
      history(conversations - 1, messagesPerConversation, conversations - 1)
    )
    for (let c = 0; c < conversations; c++) {
      yield* store.repository.appendMessages(wholeConversation, history(c, messagesPerConversation, c))
    }
    // A summarizer that keeps up: the measured conversations summarized but for their newest messages.
    for (const id of [userConversation, plainConversation, wholeConversation]) {
      yield* seedSummary(
        store.summaries,
        id,
        (id === wholeConversation ? conversations * messagesPerConversation : messagesPerConversation) - unsummarized,
        "The user and the assistant discussed orders, deliveries and schedules."
      )
    }
    yield* Effect.forEach(
      Array.from({ length: userCount - 1 }, (_, k) => k + 1),
      (u) =>
        Effect.gen(function*() {
          const other = toUserId(`user-${String(u).padStart(5, "0")}`)
          yield* store.repository.appendMessages(
            ConversationId.make(`user-${String(u).padStart(5, "0")}-c0`),
            history(conversations + u, otherMessages, u % conversations),
            { userId: other }
          )
          yield* store.users.mergeFacts(other, factsAbout(u, otherFacts))
        }),
      { concurrency: seedConcurrency, discard: true }
    )
  })

/** Builds the memory over a fresh store of `store`'s kind (its statements counted on SQL) and seeds it. */
const database = (store: BenchStore, userCount: number) =>
  Effect.gen(function*() {
    const { memory, statements, storage } = yield* countedMemory(store, ApproximateTokenCounter.layer)
    const [t] = yield* timed(seed(storage, userCount))
    return { users: userCount, memory, statements, seedSeconds: t / 1000 }
  })

/**
 * The calls timed: on the user's conversation, on a new conversation of the user, on the conversation
 * without a user of the same size as each of the user's, and on the one that holds the user's whole history.
 */
const calls = ["user", "new", "plain", "whole"] as const
type Call = (typeof calls)[number]

const call = (db: Database, which: Call, text: string): Effect.Effect<MemoryContext, unknown> =>
  which === "user"
    ? db.memory.getContext(userConversation, { userId: measuredUser, query: text })
    : which === "new"
    ? db.memory.getContext(newConversation, { userId: measuredUser, query: text })
    : which === "plain"
    ? db.memory.getContext(plainConversation, { query: text })
    : db.memory.getContext(wholeConversation, { query: text })

/** What a series of contexts held, on the runs after warm-up. */
interface Shown {
  readonly recalledTurns: number
  /** Recalled turns from another conversation than the context's. */
  readonly recalledElsewhere: number
  readonly userFacts: number
  readonly digest: number
  readonly tokens: number
}

interface Series {
  readonly users: number
  readonly call: Call
  readonly figure: Figure
  /** Statements per context on the SQL stores (null in memory): the most, and the mean. */
  readonly roundTrips: { readonly max: number; readonly mean: number } | null
  readonly shown: Shown
}

interface StoreRow {
  readonly store: string
  readonly seedSeconds: { readonly "1": number; readonly "10000": number }
  readonly series: ReadonlyArray<Series>
  /** Medians: user-scoped over conversation-scoped, at each number of users. */
  readonly userOverConversation: UserScopedRatios
  /** Medians: user-scoped over conversation-scoped on one conversation of the user's whole history. */
  readonly userOverWhole: UserScopedRatios
  /** Medians: 10,000 users over 1 user, for each call. */
  readonly manyOverOne: Record<Call, number>
}

/** The user-scoped calls' medians over a conversation-scoped one's, at each number of users. */
interface UserScopedRatios {
  readonly existing: { readonly "1": number; readonly "10000": number }
  readonly new: { readonly "1": number; readonly "10000": number }
}

const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)

/** Seeds both databases on a store, then times the six calls in turn, round after round. */
const measure = (store: BenchStore, warmup: number, runs: number) =>
  Effect.gen(function*() {
    const one = yield* database(store, 1)
    const many = yield* database(store, users)
    const bodies = [one, many].flatMap((db) => calls.map((which) => ({ db, which })))
    const trips = bodies.map((): Array<number> => [])
    const shown = bodies.map((): Array<MemoryContext> => [])
    const figures = yield* interleaved(
      warmup,
      runs,
      bodies.map(({ db, which }, b) => (i: number) =>
        Effect.gen(function*() {
          const text = query(i)
          db.statements.fiber = yield* Effect.fiberId
          const before = db.statements.value
          const start = performance.now()
          const context = yield* call(db, which, text)
          const elapsed = performance.now() - start
          if (i >= warmup) {
            trips[b]?.push(db.statements.value - before)
            shown[b]?.push(context)
          }
          return elapsed
        })
      )
    )
    const series = bodies.map(({ db, which }, b): Series => {
      const contexts = shown[b] ?? []
      const counted = trips[b] ?? []
      return {
        users: db.users,
        call: which,
        figure: figures[b] ?? { median: Number.NaN, p99: Number.NaN, runs: 0, warmup },
        roundTrips: store.over === undefined ? null : { max: Math.max(...counted), mean: mean(counted) },
        shown: {
          recalledTurns: mean(contexts.map((c) => c.recalled.length)),
          recalledElsewhere: mean(
            contexts.map((c) =>
              c.recalled.filter((t) => t.conversationId !== undefined && t.conversationId !== c.conversationId).length
            )
          ),
          userFacts: mean(contexts.map((c) => c.userFacts.length)),
          digest: mean(contexts.map((c) => c.digest.length)),
          tokens: mean(contexts.map((c) => c.tokenCount))
        }
      }
    })
    const median = (count: number, which: Call) =>
      series.find((s) => s.users === count && s.call === which)?.figure.median
    const overBase = (base: Call): UserScopedRatios => ({
      existing: {
        "1": ratio(median(1, "user"), median(1, base)),
        "10000": ratio(median(users, "user"), median(users, base))
      },
      new: { "1": ratio(median(1, "new"), median(1, base)), "10000": ratio(median(users, "new"), median(users, base)) }
    })
    return {
      store: store.name,
      seedSeconds: { "1": one.seedSeconds, "10000": many.seedSeconds },
      series,
      userOverConversation: overBase("plain"),
      userOverWhole: overBase("whole"),
      manyOverOne: {
        user: ratio(median(users, "user"), median(1, "user")),
        new: ratio(median(users, "new"), median(1, "new")),
        plain: ratio(median(users, "plain"), median(1, "plain")),
        whole: ratio(median(users, "whole"), median(1, "whole"))
      }
    } satisfies StoreRow
  })

const label: Record<Call, string> = {
  user: "user-scoped, existing conversation",
  new: "user-scoped, new conversation",
  plain: "conversation-scoped (no user)",
  whole: "conversation-scoped, whole history"
}

/** Runs the users benchmark on every store, prints it, and returns its JSON. */
export const usersBench = (settings: Settings, stores: ReadonlyArray<BenchStore>) =>
  Effect.gen(function*() {
    const rows: Array<StoreRow> = []
    const counts: Array<{ readonly store: string; readonly warmup: number; readonly runs: number }> = []
    for (const store of stores) {
      const inMemory = store.over === undefined
      const warmup = scaled(settings, inMemory ? 50 : 10, 3)
      const runs = scaled(settings, inMemory ? 500 : 100, 20)
      counts.push({ store: store.name, warmup, runs })
      rows.push(yield* Effect.scoped(measure(store, warmup, runs)))
    }
    const method = `per store, two databases side by side: user U with ${conversations} conversations of ` +
      `${messagesPerConversation} messages (generated turns, order ids, one day each, ${
        int(30)
      } facts about U), a conversation of ${messagesPerConversation} messages without a user, and U's whole history ` +
      `(${
        int(conversations * messagesPerConversation)
      } messages) as one conversation without a user; the second database ` +
      `also holds ${int(users - 1)} other users (a conversation of ${otherMessages} messages and ${otherFacts} facts ` +
      `each). The measured conversations are summarized but for their newest ${unsummarized} messages. ` +
      `getContext(id, { userId, query }) on U's latest conversation and on a new conversation of U, and ` +
      `getContext(id, { query }) on the conversations without a user, with the default summarization strategy ` +
      `(budget ${budget}, recall on), the eight calls in turn in every round, on the same query per round (half name ` +
      `an order id of U's conversations, half are questions of their common words); ${
        counts.map((c) => `${c.store}: ${c.runs} runs after ${c.warmup} warm-up`).join("; ")
      }`
    yield* printTable(
      "User-scoped contexts at scale: getContext with a query, a user of 100 conversations x 200 messages",
      method,
      [
        "store",
        "users in db",
        "call",
        "median",
        "p99",
        "x vs no user",
        "x vs whole history",
        "x vs 1 user",
        "round trips",
        "recalled (other conv.)",
        "facts",
        "digest",
        "seeding"
      ],
      rows.flatMap((r) =>
        r.series.map((s) => {
          const scoped = s.call === "user" ? "existing" : s.call === "new" ? "new" : undefined
          const count = s.users === 1 ? "1" : "10000"
          const vsPlain = scoped === undefined ? "" : times(r.userOverConversation[scoped][count])
          const vsWhole = scoped === undefined ? "" : times(r.userOverWhole[scoped][count])
          return [
            r.store,
            int(s.users),
            label[s.call],
            ms(s.figure.median),
            ms(s.figure.p99),
            vsPlain,
            vsWhole,
            s.users === 1 ? "" : times(r.manyOverOne[s.call]),
            s.roundTrips === null ? "-" : `${s.roundTrips.max} (mean ${fixed(s.roundTrips.mean, 2)})`,
            `${fixed(s.shown.recalledTurns, 1)} (${fixed(s.shown.recalledElsewhere, 1)})`,
            fixed(s.shown.userFacts, 0),
            fixed(s.shown.digest, 0),
            s.call === "user" ? `${fixed(r.seedSeconds[s.users === 1 ? "1" : "10000"], 1)} s` : ""
          ]
        })
      ),
      [
        "x vs no user: the median of the user-scoped call divided by the median of the conversation-scoped call on " +
        "a conversation of the size of each of the user's, in the same database",
        "x vs whole history: the same, against the conversation-scoped call on one conversation that holds as much " +
        "to search as the user's scope (goal: at most 1.5x)",
        "x vs 1 user: the median with 10,000 users in the database divided by the median with the user alone (goal: " +
        "about 1.0x)",
        "round trips: statements a context sends to the database, counted by a SqlClient that wraps the store's " +
        "connections: the most, and the mean (goal: at most 3)",
        "recalled: turns recalled per context, those from another conversation of the user in brackets; facts and " +
        "digest: what is known about the user and the user's conversations listed, per context"
      ]
    )
    return { method, conversations, messagesPerConversation, users, runs: counts, rows }
  })
