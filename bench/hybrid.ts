/**
 * The vector side of hybrid recall on each store: `searchEmbeddings` latency against the length of
 * one conversation (every message embedded, 256 dimensions, as `text-embedding-3-small` with
 * `dimensions: 256`), and the cost of storing one background batch of 64 vectors. The vectors are
 * scanned (one conversation's rows, no vector index), so the latency grows with the conversation:
 * this measures how much. A search across a user's conversations (50 of 200 messages, every one
 * embedded) compares the user's newest `defaultUserScanLimit` messages: it costs what a conversation
 * of that length does.
 */
import { DateTime, Effect } from "effect"
import { randomUUID } from "node:crypto"
import * as ConversationId from "../src/domain/ConversationId.js"
import type { NewMessage } from "../src/domain/Message.js"
import * as UserId from "../src/domain/UserId.js"
import * as Store from "../src/layers/store/Store.js"
import { defaultUserScanLimit } from "../src/strategies/internal/recall/hybrid.js"
import { type BenchStore, scaled, type Settings } from "./setup.js"
import { ms, printTable, ratio, summarize, timed, times } from "./stats.js"
import { pick } from "./texts.js"

const lengths = [1000, 10_000] as const
const dimensions = 256
const batch = 64
const createdAt = DateTime.unsafeMake(0)

/** A deterministic pseudo-random vector. */
const vector = (...seed: ReadonlyArray<number>): Array<number> =>
  Array.from({ length: dimensions }, (_, d) => pick(2001, ...seed, d) / 1000 - 1)

const message = (i: number): NewMessage => {
  const content = `message ${i}: the delivery of order ${i} is planned`
  return { role: i % 2 === 0 ? "user" : "assistant", content, metadata: {}, tokenCount: 12, createdAt }
}

const model = "bench-embedding"

/** The user searched across: `userConversations` conversations of `userConversationLength` messages. */
const userConversations = 50
const userConversationLength = 200

/** A search across a user's conversations. */
interface UserRow {
  readonly conversations: number
  readonly messages: number
  readonly scanLimit: number
  /** Median milliseconds of one search. */
  readonly search: number
}

interface Row {
  readonly messages: number
  /** Median milliseconds of one search. */
  readonly search: number
  /** Median milliseconds of storing one batch. */
  readonly store64: number
}

const byLength = (warmup: number, runs: number) =>
  Effect.gen(function*() {
    const store = yield* Store.get
    const rows: Array<Row> = []
    for (const length of lengths) {
      const id = ConversationId.make(`hybrid-${length}-${randomUUID()}`)
      for (let start = 0; start < length; start += 2000) {
        const count = Math.min(2000, length - start)
        yield* store.repository.appendMessages(id, Array.from({ length: count }, (_, k) => message(start + k)))
      }
      const storeTimes: Array<number> = []
      for (let start = 1; start <= length; start += batch) {
        const seqs = Array.from({ length: Math.min(batch, length - start + 1) }, (_, k) => start + k)
        const [t] = yield* timed(
          store.index.storeEmbeddings(id, model, seqs.map((seq) => ({ seq, vector: vector(seq) })))
        )
        storeTimes.push(t)
      }
      const searchTimes: Array<number> = []
      for (let round = 0; round < warmup + runs; round++) {
        const [t] = yield* timed(
          store.index.searchEmbeddings(id, { model, vector: vector(length, round), before: length + 1, limit: 9 })
        )
        if (round >= warmup) searchTimes.push(t)
      }
      yield* store.repository.deleteConversation(id)
      rows.push({
        messages: length,
        search: summarize(searchTimes, warmup).median,
        store64: summarize(storeTimes.slice(2), 2).median
      })
    }
    return rows
  })

const acrossUser = (warmup: number, runs: number) =>
  Effect.gen(function*() {
    const store = yield* Store.get
    const userId = UserId.UserId.make(`hybrid-user-${randomUUID()}`)
    for (let c = 0; c < userConversations; c++) {
      const id = ConversationId.make(`hybrid-user-${c}-${randomUUID()}`)
      yield* store.repository.appendMessages(
        id,
        Array.from({ length: userConversationLength }, (_, k) => message(c * userConversationLength + k)),
        { userId }
      )
      for (let start = 1; start <= userConversationLength; start += batch) {
        const seqs = Array.from({ length: Math.min(batch, userConversationLength - start + 1) }, (_, k) => start + k)
        yield* store.index.storeEmbeddings(id, model, seqs.map((seq) => ({ seq, vector: vector(c, seq) })))
      }
    }
    const searchTimes: Array<number> = []
    for (let round = 0; round < warmup + runs; round++) {
      const [t, hits] = yield* timed(
        store.users.searchEmbeddings(userId, {
          model,
          vector: vector(-1, round),
          limit: 9,
          scanLimit: defaultUserScanLimit
        })
      )
      if (hits.length === 0) return yield* Effect.dieMessage("the user-wide vector search found nothing")
      if (round >= warmup) searchTimes.push(t)
    }
    yield* store.users.erase(userId)
    return {
      conversations: userConversations,
      messages: userConversations * userConversationLength,
      scanLimit: defaultUserScanLimit,
      search: summarize(searchTimes, warmup).median
    } satisfies UserRow
  })

/** Runs the hybrid benchmark on every store, prints it, and returns its JSON. */
export const hybridBench = (settings: Settings, stores: ReadonlyArray<BenchStore>) =>
  Effect.gen(function*() {
    const warmup = scaled(settings, 5, 2)
    const runs = scaled(settings, 30, 10)
    const results: Array<{ readonly store: string; readonly rows: ReadonlyArray<Row>; readonly user: UserRow }> = []
    for (const store of stores) {
      const [rows, user] = yield* Effect.provide(
        Effect.scoped(Effect.all([byLength(warmup, runs), acrossUser(warmup, runs)])),
        store.layer
      )
      results.push({ store: store.name, rows, user })
    }
    const method = `one conversation per length, every message embedded (${dimensions} dimensions, pseudo-random), ` +
      `${runs} searches (limit 9) after ${warmup} warm-up; vectors stored in batches of ${batch}`
    yield* printTable(
      "hybrid recall: vector search and storage",
      method,
      ["store", "messages", "searchEmbeddings", "x vs 1,000", "storeEmbeddings (64)"],
      results.flatMap((r) => [
        ...r.rows.map((row) => [
          r.store,
          row.messages.toLocaleString("en-US"),
          ms(row.search),
          row.messages === 1000 ? "" : times(ratio(row.search, r.rows[0]?.search)),
          ms(row.store64)
        ]),
        [
          r.store,
          `a user's ${r.user.messages.toLocaleString("en-US")} in ${r.user.conversations} conversations, ` +
          `the newest ${r.user.scanLimit.toLocaleString("en-US")} compared`,
          ms(r.user.search),
          times(ratio(r.user.search, r.rows[0]?.search)),
          ""
        ]
      ]),
      [
        "the scan reads one conversation's vectors: its cost grows with the conversation (no vector index)",
        "across a user's conversations, it reads the newest of them up to the scan limit"
      ]
    )
    return { method, warmup, runs, dimensions, stores: results }
  })
