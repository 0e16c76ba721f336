/**
 * The SQL store's conversation log (`RepositoryService`): appends and their counters, range reads
 * and counts, the one-round-trip window read, turn reads, and deleting a conversation.
 */
import type { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option } from "effect"
import { empty as emptySettings } from "../../../../domain/internal/conversationSettings.js"
import { Message } from "../../../../domain/Message.js"
import { ConversationNotFoundError } from "../../../../errors/ConversationNotFoundError.js"
import { RepositoryService } from "../../../../services/RepositoryService.js"
import { completeWindow } from "../window.js"
import { makeBinding, refusal } from "./binding.js"
import { storeErrors } from "./errors.js"
import * as Rows from "./rows.js"
import { scopeOf, vectorText } from "./search.js"
import { lowerBound, type Statements, tally, upperBound } from "./statements.js"

/** The most conversations a window's digest lists. */
const maxDigest = 1000

/** A window row's user sections; none for a conversation without a user. */
const userSections = (row: typeof Rows.WindowRow.Type): RepositoryService.UserSections | null => {
  const userId = row.user_id
  return userId === null ? null : {
    userId,
    facts: (row.user_facts ?? []).map(Rows.toUserFact),
    digest: (row.digest ?? []).map((entry) => Rows.toEntry(userId, entry))
  }
}

/** The log over the store's statements. */
export const make = (sql: SqlClient.SqlClient, statements: Statements): RepositoryService.Service => {
  const { appendRows, countRange, findConversation, findOrFail, requireIfEmpty, selectMessages, selectWindow } =
    statements
  const binding = makeBinding(sql)

  const listMessages: RepositoryService.Service["listMessages"] = Effect.fnUntraced(
    function*(conversationId, query) {
      const limit = query.limit === undefined || query.limit === Number.POSITIVE_INFINITY
        ? null
        : Math.max(0, Math.floor(query.limit))
      const newest = query.from === "newest"
      const rows = yield* selectMessages({
        id: conversationId,
        after: lowerBound(query.after),
        before: upperBound(query.before),
        limit,
        newest
      })
      if (rows.length === 0) return yield* new ConversationNotFoundError({ conversationId })
      const messages: Array<Message> = []
      for (const row of rows) if (row.seq !== null) messages.push(Rows.toMessage(conversationId, row))
      return newest ? messages.reverse() : messages
    },
    (effect, conversationId) => Effect.catchTags(effect, storeErrors("listMessages", conversationId))
  )

  return RepositoryService.of({
    appendMessages: Effect.fnUntraced(
      function*(conversationId, newMessages, options) {
        const userId = options?.userId ?? null
        if (newMessages.length === 0) {
          const row = yield* findConversation(conversationId)
          const owner = Option.match(row, { onNone: () => null, onSome: (r) => r.user_id })
          if (userId !== null && owner !== null && owner !== userId) return yield* refusal()
          return {
            messages: [],
            messageCount: Option.match(row, { onNone: () => 0, onSome: (r) => r.message_count }),
            userId: owner
          }
        }
        const now = DateTime.toDateUtc(yield* DateTime.now)
        const createdAt = newMessages.map((m) => DateTime.formatIso(m.createdAt))
        const lastSaidAt = newMessages.reduce(
          (latest, m) => DateTime.max(latest, m.createdAt),
          newMessages[0]?.createdAt ?? DateTime.unsafeFromDate(now)
        )
        const { firstTurnRole, leadingSystem, roles, tokens } = tally(newMessages)
        const request = {
          id: conversationId,
          count: newMessages.length,
          ...roles,
          tokens,
          leadingSystem,
          firstTurnRole,
          now,
          messageRoles: newMessages.map((m) => m.role),
          contents: newMessages.map((m) => m.content),
          metadata: newMessages.map((m) => JSON.stringify(m.metadata)),
          tokenCounts: newMessages.map((m) => m.tokenCount),
          // A conversation starts when its first message is said (`ConversationInfo.createdAt`).
          startedAt: createdAt[0] ?? now.toISOString(),
          createdAt,
          lastSaidAt: DateTime.formatIso(lastSaidAt),
          search: newMessages.map((m) => m.role === "summary" ? null : vectorText(conversationId, m)),
          scope: scopeOf(conversationId),
          userId
        }
        const applied = yield* appendRows(request)
        // Not applied means the append names a user, and the conversation has none yet or another.
        // It is then bound or refused, and appended to, in one transaction. This happens once per
        // conversation; later appends apply at once.
        const reserved = Option.isSome(applied) || userId === null
          ? applied
          : yield* sql.withTransaction(Effect.zipRight(binding.claim(conversationId, userId), appendRows(request)))
        // An upsert with RETURNING returns its row, unless it names a user it may not apply for.
        if (Option.isNone(reserved)) return yield* Effect.dieMessage("appendMessages: the upsert returned no row")
        const first = reserved.value.last_seq - newMessages.length + 1
        const stored = newMessages.map((message, i) =>
          new Message({ ...message, conversationId, seq: first + i }, { disableValidation: true })
        )
        return { messages: stored, messageCount: reserved.value.message_count, userId: reserved.value.user_id }
      },
      (effect, conversationId) => Effect.catchTags(effect, storeErrors("appendMessages", conversationId))
    ),

    getConversation: Effect.fnUntraced(
      function*(conversationId) {
        return Rows.toInfo(conversationId, yield* findOrFail(conversationId))
      },
      (effect, conversationId) => Effect.catchTags(effect, storeErrors("getConversation", conversationId))
    ),

    listMessages,

    countMessages: Effect.fnUntraced(
      function*(conversationId, query) {
        // The whole log's counts are the counters writes maintain, so no scan.
        if (query.after === undefined && query.before === undefined) {
          const row = yield* findOrFail(conversationId)
          return {
            total: row.message_count,
            tokenCount: row.token_count,
            ...Rows.toInfo(conversationId, row).roleCounts
          }
        }
        const rows = yield* countRange({
          id: conversationId,
          after: lowerBound(query.after),
          before: upperBound(query.before)
        })
        const counts = rows[0]
        if (counts === undefined || counts.total === 0) yield* requireIfEmpty(conversationId, [])
        return counts === undefined
          ? { total: 0, tokenCount: 0, system: 0, user: 0, assistant: 0, tool: 0, summary: 0 }
          : Rows.toCounts(counts)
      },
      (effect, conversationId) => Effect.catchTags(effect, storeErrors("countMessages", conversationId))
    ),

    readWindow: Effect.fnUntraced(
      function*(conversationId, query) {
        // One statement reads the counters, the state and the messages they call for (see
        // `selectWindow`). The index range is narrowed to the rows the page can hold. Should that
        // ever fall short, an invariant is broken, and the read is repeated over the whole range.
        const tokenLimit = Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, query.tokenLimit))
        const digest = Number.isNaN(query.digest) ? 0 : Math.max(0, Math.min(maxDigest, Math.floor(query.digest ?? 0)))
        let narrow = true
        while (true) {
          const found = yield* selectWindow({
            id: conversationId,
            cursor: query.after === "cursor",
            tokenLimit,
            narrow,
            digest,
            user: query.userId ?? null
          })
          if (Option.isNone(found)) return yield* new ConversationNotFoundError({ conversationId })
          const row = found.value
          const info = Rows.toInfo(conversationId, row)
          const system: Array<Message> = []
          const recent: Array<Message> = []
          for (const r of row.messages) {
            const message = Rows.toMessage(conversationId, r)
            if (message.seq <= info.systemPrefixSeq) system.push(message)
            else recent.push(message)
          }
          system.sort((a, b) => a.seq - b.seq)
          recent.sort((a, b) => a.seq - b.seq)
          // One row more than the page is read; its presence says the range holds more. What is sent
          // may be cut back further to start at a user message (see `selectWindow`).
          const reachedStart = row.window_rows < row.window_limit && recent.length === row.window_rows
          if (row.window_rows < row.window_limit && row.window_floor > row.window_after && narrow) {
            narrow = false
            continue
          }
          // A page sized by the mean message falls short when the newest messages are small. The rest
          // is then read back a page at a time, in a rarely needed second round trip.
          const completed = yield* completeWindow(
            { recent: recent.length === row.window_limit ? recent.slice(1) : recent, reachedStart },
            tokenLimit,
            (before, limit) => listMessages(conversationId, { after: row.window_after, before, limit, from: "newest" })
          )
          return {
            info,
            state: Rows.toState(conversationId, row),
            settings: row.settings ?? emptySettings,
            system,
            after: row.window_after,
            recent: completed.recent,
            reachedStart: completed.reachedStart,
            user: userSections(row)
          }
        }
      },
      (effect, conversationId) => Effect.catchTags(effect, storeErrors("readWindow", conversationId))
    ),

    readTurns: Effect.fnUntraced(
      function*(conversationId, query) {
        const rows = yield* statements.selectTurns({
          id: conversationId,
          seqs: query.seqs.filter(Number.isSafeInteger),
          before: upperBound(query.before),
          limit: query.limit === undefined || query.limit === Number.POSITIVE_INFINITY
            ? null
            : Math.max(0, Math.floor(query.limit))
        })
        if (rows.length === 0) return yield* new ConversationNotFoundError({ conversationId })
        // Rows come in seq order, each with its turn's first seq. A new first seq starts a turn.
        const turns: Array<Array<Message>> = []
        let current: Array<Message> = []
        let start = -1
        for (const row of rows) {
          if (row.seq === null) continue
          if (row.turn_start !== start) {
            current = []
            turns.push(current)
            start = row.turn_start
          }
          current.push(Rows.toMessage(conversationId, row))
        }
        return turns
      },
      (effect, conversationId) => Effect.catchTags(effect, storeErrors("readTurns", conversationId))
    ),

    deleteConversation: Effect.fnUntraced(
      function*(conversationId) {
        yield* sql.withTransaction(statements.deleteConversation(conversationId))
      },
      (effect, conversationId) => Effect.catchTags(effect, storeErrors("deleteConversation", conversationId))
    )
  })
}
