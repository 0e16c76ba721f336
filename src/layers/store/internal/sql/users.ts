/**
 * The SQL store's user port (`UserStore`): each user's facts, merged by when they were said, and
 * the operations spanning a user's conversations (list, search, turns, erasure).
 */
import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { DateTime, Effect, Option, type ParseResult } from "effect"
import type { ConversationId } from "../../../../domain/ConversationId.js"
import type { Message } from "../../../../domain/Message.js"
import { UserErasure } from "../../../../domain/UserErasure.js"
import type { UserFact } from "../../../../domain/UserFact.js"
import { RepositoryError } from "../../../../errors/RepositoryError.js"
import { MergeResult, UserStore } from "../../../../services/UserStore.js"
import { makeEmbeddings } from "./embeddings.js"
import * as Rows from "./rows.js"
import { makeUserSearch } from "./userSearch.js"
import { makeUserStatements } from "./userStatements.js"

/** A user operation's `catchTags` handlers. The user id stays out of the error. */
const userErrors = (operation: string) => ({
  SqlError: (cause: SqlError) => Effect.fail(new RepositoryError({ operation, cause })),
  ParseError: (cause: ParseResult.ParseError) => Effect.fail(new RepositoryError({ operation, cause }))
})

/**
 * The fact each key takes from a merge: its last fact said at the latest time, as merging one by
 * one would leave it. Ordered by key, the order the statement writes and locks them.
 */
const winners = (facts: ReadonlyArray<UserFact>): ReadonlyArray<UserFact> => {
  const byKey = new Map<string, UserFact>()
  for (const fact of facts) {
    const kept = byKey.get(fact.key)
    if (kept === undefined || !DateTime.lessThan(fact.saidAt, kept.saidAt)) byKey.set(fact.key, fact)
  }
  return [...byKey.values()].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))
}

/**
 * A merge's applied facts, in the order given, as merging one by one would apply them. Among the
 * keys the statement wrote, these are the facts said no earlier than what their key held.
 */
const appliedOf = (
  facts: ReadonlyArray<UserFact>,
  written: ReadonlySet<string>,
  previous: ReadonlyMap<string, DateTime.Utc>
): ReadonlyArray<UserFact> => {
  const held = new Map(previous)
  const applied: Array<UserFact> = []
  for (const fact of facts) {
    if (!written.has(fact.key)) continue
    const current = held.get(fact.key)
    if (current !== undefined && DateTime.lessThan(fact.saidAt, current)) continue
    held.set(fact.key, fact.saidAt)
    applied.push(fact)
  }
  return applied
}

/** A limit as a row count from 0 to `max`; null (all rows) for NaN. */
const rowLimit = (limit: number, max: number): number | null =>
  Number.isNaN(limit) ? null : Math.max(0, Math.min(max, Math.floor(limit)))

/** The user port over one `SqlClient`. */
export const make = (sql: SqlClient.SqlClient): UserStore.Service => {
  const statements = makeUserStatements(sql)
  const search = makeUserSearch(sql)
  const embeddings = makeEmbeddings(sql)

  return UserStore.of({
    getFacts: Effect.fnUntraced(
      function*(userId) {
        return (yield* statements.selectFacts(userId)).map(Rows.toUserFact)
      },
      (effect) => Effect.catchTags(effect, userErrors("getFacts"))
    ),

    mergeFacts: Effect.fnUntraced(
      function*(userId, facts, cursor) {
        if (facts.length === 0 && cursor === undefined) return MergeResult.Merged({ applied: [] })
        const rows = winners(facts)
        const merged = yield* statements.merge({
          user: userId,
          cursor: cursor !== undefined,
          conversationId: cursor?.conversationId ?? null,
          expected: cursor?.expected ?? 0,
          next: cursor?.next ?? 0,
          incarnation: cursor?.incarnation ?? null,
          keys: rows.map((fact) => fact.key),
          values: rows.map((fact) => fact.value),
          categories: rows.map((fact) => fact.category),
          saidAt: rows.map((fact) => DateTime.formatIso(fact.saidAt)),
          sources: rows.map((fact) => fact.source?.conversationId ?? null),
          seqs: rows.map((fact) => fact.source?.seq ?? null)
        })
        // A `SELECT` without `FROM` always returns its row.
        if (Option.isNone(merged)) return yield* Effect.dieMessage("mergeFacts: the statement returned no row")
        const { moved, previous, written } = merged.value
        if (cursor !== undefined && moved === 0) return MergeResult.Stale()
        return MergeResult.Merged({
          applied: appliedOf(facts, new Set(written), new Map(previous.map((row) => [row.key, row.said_at])))
        })
      },
      (effect) => Effect.catchTags(effect, userErrors("mergeFacts"))
    ),

    listConversations: Effect.fnUntraced(
      function*(userId, query) {
        const limit = rowLimit(query.limit, 1000) ?? 0
        if (limit === 0) return []
        const rows = yield* statements.selectEntries({
          user: userId,
          limit,
          before: query.before === undefined ? null : DateTime.formatIso(query.before),
          after: query.after === undefined
            ? null
            : { at: DateTime.formatIso(query.after.lastSaidAt), id: query.after.conversationId },
          factsPending: query.factsPending === true
        })
        return rows.map((row) => Rows.toEntry(userId, row))
      },
      (effect) => Effect.catchTags(effect, userErrors("listConversations"))
    ),

    searchMessages: Effect.fnUntraced(
      function*(userId, query) {
        return yield* search(userId, query)
      },
      (effect) => Effect.catchTags(effect, userErrors("searchMessages"))
    ),

    searchEmbeddings: Effect.fnUntraced(
      function*(userId, query) {
        return yield* embeddings.searchUser(userId, query)
      },
      (effect) => Effect.catchTags(effect, userErrors("searchEmbeddings"))
    ),

    readTurns: Effect.fnUntraced(
      function*(userId, query) {
        const hits = query.hits.filter((hit) => Number.isSafeInteger(hit.seq))
        const limit = rowLimit(query.limit, Number.MAX_SAFE_INTEGER)
        if (hits.length === 0 || limit === 0) return []
        const rows = yield* statements.selectTurns({
          user: userId,
          conversations: hits.map((hit) => hit.conversationId),
          seqs: hits.map((hit) => hit.seq),
          limit
        })
        // Rows come turn by turn in the order of the hits, each turn's messages in seq order.
        const turns: Array<{ conversationId: ConversationId; messages: Array<Message> }> = []
        let turn = -1
        for (const row of rows) {
          if (row.turn !== turn) {
            turns.push({ conversationId: row.conversation_id, messages: [] })
            turn = row.turn
          }
          turns[turns.length - 1]?.messages.push(Rows.toMessage(row.conversation_id, row))
        }
        return turns
      },
      (effect) => Effect.catchTags(effect, userErrors("readTurns"))
    ),

    erase: Effect.fnUntraced(
      function*(userId) {
        const erased = yield* sql.withTransaction(statements.erase(userId))
        return new UserErasure({ userId, ...erased })
      },
      (effect) => Effect.catchTags(effect, userErrors("erase"))
    )
  })
}
