/**
 * The SQL store: every storage port (`RepositoryService`, `SummaryStore`,
 * `SettingsStore`, `MessageIndex`, `SummarizationLease`) over the generic `SqlClient` of
 * `@effect/sql` in the PostgreSQL 15 dialect: PostgreSQL through `@effect/sql-pg`, or PGlite
 * embedded.
 *
 * @since 0.1.0
 */
import { Migrator, SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { DateTime, Duration, Effect, type Layer, Option, type ParseResult, Schema } from "effect"
import * as ConversationSettings from "../../domain/ConversationSettings.js"
import { empty as emptySettings, isEmpty } from "../../domain/internal/conversationSettings.js"
import { Message } from "../../domain/Message.js"
import { ConversationNotFoundError } from "../../errors/ConversationNotFoundError.js"
import { RepositoryError } from "../../errors/RepositoryError.js"
import { MessageIndex } from "../../services/MessageIndex.js"
import { RepositoryService } from "../../services/RepositoryService.js"
import { SettingsStore } from "../../services/SettingsStore.js"
import { SummarizationLease } from "../../services/SummarizationLease.js"
import { SummaryStore } from "../../services/SummaryStore.js"
import { applyCommit } from "./internal/sql/commit.js"
import { makeEmbeddings } from "./internal/sql/embeddings.js"
import { makeSummarizationLock } from "./internal/sql/lock.js"
import { runMigrations } from "./internal/sql/migrations.js"
import * as Rows from "./internal/sql/rows.js"
import { makeSearch, vectorText } from "./internal/sql/search.js"
import { lowerBound, makeStatements, tally, upperBound } from "./internal/sql/statements.js"
import { completeWindow } from "./internal/window.js"
import * as Store from "./Store.js"

/**
 * Options of the SQL repository.
 *
 * `lock` says how the summarization lease (`SummarizationLease.withLease`) keeps other processes out: `"lease"` (the default) takes
 * a lease on the conversation in the database for the duration, for databases that several
 * processes share; it holds no connection while the effect runs. `"process"` excludes holders of
 * this process only, for stores one process owns (PGlite).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly lock?: "lease" | "process" | undefined
  /**
   * With `"lease"`: how many summarizations this repository lets hold the lock at once; beyond
   * that the lock answers `None` (busy). Unbounded by default: a holder keeps no connection while
   * its effect waits (for a model), and the strategies' background jobs bound their own
   * concurrency (`summarizationConcurrency`).
   */
  readonly maxLockConnections?: number | undefined
  /**
   * With `"lease"`: how long a lease lasts unless renewed (default 30 seconds). It is renewed while
   * its holder runs, so this is only how long a holder that died keeps other processes from
   * summarizing its conversation.
   */
  readonly lease?: Duration.DurationInput | undefined
  /** @deprecated Use `lease`. */
  readonly leaseMillis?: number | undefined
}

const defaultLease = Duration.seconds(30)

const storeErrors = (operation: string, conversationId: string) => ({
  SqlError: (cause: SqlError) => Effect.fail(new RepositoryError({ operation, conversationId, cause })),
  ParseError: (cause: ParseResult.ParseError) => Effect.fail(new RepositoryError({ operation, conversationId, cause }))
})

/** As `storeErrors`; a settings row that does not decode is named in the detail. */
const settingsErrors = (operation: string, conversationId: string) => ({
  SqlError: (cause: SqlError) => Effect.fail(new RepositoryError({ operation, conversationId, cause })),
  ParseError: (cause: ParseResult.ParseError) =>
    Effect.fail(
      new RepositoryError({
        operation,
        conversationId,
        detail: `the stored settings do not decode: ${cause.message}`,
        cause
      })
    )
})

/** The settings as the JSON stored in the `settings` column. */
const settingsJson = (settings: ConversationSettings.ConversationSettings) =>
  Schema.encode(ConversationSettings.ConversationSettings)(settings).pipe(
    Effect.map((encoded) => JSON.stringify(encoded)),
    // The port takes valid settings (the class validates on construction): anything else came past
    // the type system.
    Effect.catchTag("ParseError", (error) => Effect.dieMessage(`setSettings: invalid settings: ${error.message}`))
  )

/**
 * Builds the store over the `SqlClient` in context: the implementations of the ports, over the
 * same tables. The schema must be in place (`migrate`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<Store.Store, never, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const statements = makeStatements(sql)
    const { appendRows, countRange, findConversation, findOrFail, requireIfEmpty } = statements
    const { selectMessages, selectRecords, selectWindow } = statements
    const commit = applyCommit(statements)
    const search = makeSearch(sql)
    const embeddings = makeEmbeddings(sql)

    const withLease = yield* makeSummarizationLock(sql, {
      shared: (options.lock ?? "lease") !== "process",
      maxHolders: options.maxLockConnections,
      leaseMillis: Duration.toMillis(options.lease ?? options.leaseMillis ?? defaultLease)
    })

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

    const repository = RepositoryService.of({
      appendMessages: Effect.fnUntraced(
        function*(conversationId, newMessages) {
          if (newMessages.length === 0) {
            const row = yield* findConversation(conversationId)
            return {
              messages: [],
              messageCount: Option.match(row, { onNone: () => 0, onSome: (r) => r.message_count })
            }
          }
          const now = DateTime.toDateUtc(yield* DateTime.now)
          const createdAt = newMessages.map((m) => DateTime.formatIso(m.createdAt))
          const { firstTurnRole, leadingSystem, roles, tokens } = tally(newMessages)
          const reserved = yield* appendRows({
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
            // A conversation starts when its first message was said (`ConversationInfo.createdAt`).
            startedAt: createdAt[0] ?? now.toISOString(),
            createdAt,
            search: newMessages.map((m) => m.role === "summary" ? null : vectorText(conversationId, m))
          })
          // An upsert with RETURNING always returns its row.
          if (Option.isNone(reserved)) return yield* Effect.dieMessage("appendMessages: the upsert returned no row")
          const first = reserved.value.last_seq - newMessages.length + 1
          const stored = newMessages.map((message, i) =>
            new Message({ ...message, conversationId, seq: first + i }, { disableValidation: true })
          )
          return { messages: stored, messageCount: reserved.value.message_count }
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
          // The whole log's counts are the counters the writes maintain: no scan.
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
          // One round trip: the counters, the state and the messages they call for, read in one
          // statement (see `selectWindow`). The index range is narrowed to the rows the page can
          // hold; should that ever fall short (a broken invariant), the read is repeated over the
          // whole range.
          const tokenLimit = Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, query.tokenLimit))
          let narrow = true
          while (true) {
            const found = yield* selectWindow({
              id: conversationId,
              cursor: query.after === "cursor",
              tokenLimit,
              narrow
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
            // One more than the page is read: whether it came back says if the range holds more. What
            // is sent may be cut back further (see `selectWindow`): it then starts at a user message.
            const reachedStart = row.window_rows < row.window_limit && recent.length === row.window_rows
            if (row.window_rows < row.window_limit && row.window_floor > row.window_after && narrow) {
              narrow = false
              continue
            }
            // A page sized by the mean message falls short when the newest messages are small: the
            // rest is read back a page at a time (a second round trip, rarely needed).
            const completed = yield* completeWindow(
              { recent: recent.length === row.window_limit ? recent.slice(1) : recent, reachedStart },
              tokenLimit,
              (before, limit) =>
                listMessages(conversationId, { after: row.window_after, before, limit, from: "newest" })
            )
            return {
              info,
              state: Rows.toState(conversationId, row),
              settings: row.settings ?? emptySettings,
              system,
              after: row.window_after,
              recent: completed.recent,
              reachedStart: completed.reachedStart
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
          // Rows come in seq order, each with the first seq of its turn: a new one starts a turn.
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

    return {
      repository,
      summaries: SummaryStore.of({
        getSummaryState: Effect.fnUntraced(
          function*(conversationId) {
            return Rows.toState(conversationId, yield* findOrFail(conversationId))
          },
          (effect, conversationId) => Effect.catchTags(effect, storeErrors("getSummaryState", conversationId))
        ),

        commitSummary: Effect.fnUntraced(
          function*(summaryCommit) {
            yield* Effect.annotateCurrentSpan("conversationId", summaryCommit.conversationId)
            const now = yield* DateTime.now
            return yield* sql.withTransaction(commit(summaryCommit, now))
          },
          (effect, summaryCommit) =>
            Effect.catchTags(effect, storeErrors("commitSummary", summaryCommit.conversationId))
        ),

        listSummarizations: Effect.fnUntraced(
          function*(conversationId) {
            const rows = yield* Effect.flatMap(
              selectRecords(conversationId),
              (rows) => requireIfEmpty(conversationId, rows)
            )
            return rows.map((row) => Rows.toRecord(conversationId, row))
          },
          (effect, conversationId) => Effect.catchTags(effect, storeErrors("listSummarizations", conversationId))
        )
      }),
      settings: SettingsStore.of({
        getSettings: Effect.fnUntraced(
          function*(conversationId) {
            const row = yield* statements.selectSettings(conversationId)
            return Option.match(row, { onNone: () => emptySettings, onSome: (r) => r.settings })
          },
          (effect, conversationId) => Effect.catchTags(effect, settingsErrors("getSettings", conversationId))
        ),

        setSettings: Effect.fnUntraced(
          function*(conversationId, settings) {
            const json = yield* settingsJson(settings)
            // The empty settings are stored as none: the id then holds nothing but what its log holds.
            if (isEmpty(settings)) {
              yield* statements.deleteSettings(conversationId)
              return emptySettings
            }
            const now = DateTime.toDateUtc(yield* DateTime.now)
            const stored = yield* statements.upsertSettings({ id: conversationId, settings: json, now })
            // An upsert with RETURNING always returns its row.
            if (Option.isNone(stored)) return yield* Effect.dieMessage("setSettings: the upsert returned no row")
            return stored.value.settings
          },
          (effect, conversationId) => Effect.catchTags(effect, settingsErrors("setSettings", conversationId))
        )
      }),
      index: MessageIndex.of({
        searchMessages: Effect.fnUntraced(
          function*(conversationId, query) {
            return yield* search(conversationId, query)
          },
          (effect, conversationId) => Effect.catchTags(effect, storeErrors("searchMessages", conversationId))
        ),

        pendingEmbeddings: Effect.fnUntraced(
          function*(conversationId, query) {
            return yield* embeddings.pending(conversationId, query)
          },
          (effect, conversationId) => Effect.catchTags(effect, storeErrors("pendingEmbeddings", conversationId))
        ),

        storeEmbeddings: Effect.fnUntraced(
          function*(conversationId, model, vectors) {
            yield* embeddings.store(conversationId, model, vectors)
          },
          (effect, conversationId) =>
            Effect.catchTags(effect, { SqlError: storeErrors("storeEmbeddings", conversationId).SqlError })
        ),

        searchEmbeddings: Effect.fnUntraced(
          function*(conversationId, query) {
            return yield* embeddings.search(conversationId, query)
          },
          (effect, conversationId) => Effect.catchTags(effect, storeErrors("searchEmbeddings", conversationId))
        )
      }),
      lease: SummarizationLease.of({ withLease })
    }
  })

/**
 * Creates or upgrades the repository's tables (migrations recorded in `chat_memory_migrations`).
 * Safe to run from several processes at once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const migrate: Effect.Effect<void, RepositoryError, SqlClient.SqlClient> = runMigrations.pipe(
  // Two processes starting together may race to create the migrations table; the loser's next
  // attempt finds it and waits on its lock, then has nothing to do.
  Effect.retry({ times: 2, while: (error) => error._tag === "SqlError" }),
  Effect.asVoid,
  // A migration that fails is a defect of `Migrator`; for us it is a store failure.
  Effect.catchSomeDefect((defect) =>
    defect instanceof Migrator.MigrationError
      ? Option.some(Effect.fail(new RepositoryError({ operation: "migrate", cause: defect })))
      : Option.none()
  ),
  Effect.catchTags({
    SqlError: (cause) => Effect.fail(new RepositoryError({ operation: "migrate", cause })),
    MigrationError: (cause) => Effect.fail(new RepositoryError({ operation: "migrate", cause }))
  }),
  Effect.withSpan("SqlStore.migrate")
)

/**
 * The SQL store over the `SqlClient` in context, providing every storage port, after running the
 * migrations.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<Store.Ports, RepositoryError, SqlClient.SqlClient> =>
  Store.layer(Effect.zipRight(migrate, make(options)))
