/**
 * The SQL store's statements, with their row schemas. Each names one conversation and reads an
 * index range of it.
 */
import type { SqlClient, Statement } from "@effect/sql"
import { SqlSchema } from "@effect/sql"
import { Array, DateTime, Effect, Option, Schema } from "effect"
import type { ConversationId } from "../../../../domain/ConversationId.js"
import type { Message, NewMessage } from "../../../../domain/Message.js"
import type { SummarizationRecord, SummaryState } from "../../../../domain/SummaryState.js"
import type { UserId } from "../../../../domain/UserId.js"
import { ConversationNotFoundError } from "../../../../errors/ConversationNotFoundError.js"
import type { RepositoryService } from "../../../../services/RepositoryService.js"
import * as Rows from "./rows.js"
import { withUserTerms } from "./userTerms.js"

/** Rows per `INSERT` statement: 8 parameters each, well under PostgreSQL's 65,535. */
const insertChunk = 1000

/** How far from a seq the turns read first looks for the user messages around it (`selectTurns`). */
export const turnReach = 64

// Seqs are integers, so `seq > 2.5` is `seq > 2` and `seq < 2.5` is `seq < 3`. An integer bound
// has the key's type, so the primary key serves the range.
/** The integer lower bound (exclusive) of a seq range. */
export const lowerBound = (after: number | undefined): number =>
  after === undefined || after < 0 ? 0 : Math.min(Number.MAX_SAFE_INTEGER, Math.floor(after))

/** The integer upper bound (exclusive) of a seq range. */
export const upperBound = (before: number | undefined): number =>
  before === undefined || before > Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : Math.max(0, Math.ceil(before))

/** What an append adds to the conversation's counters. */
export const tally = (messages: ReadonlyArray<NewMessage>) => {
  const roles = { system: 0, user: 0, assistant: 0, tool: 0, summary: 0 }
  let tokens = 0
  for (const message of messages) {
    roles[message.role] += 1
    tokens += message.tokenCount
  }
  const firstOther = messages.findIndex((message) => message.role !== "system")
  return {
    roles,
    tokens,
    leadingSystem: firstOther === -1 ? messages.length : firstOther,
    firstTurnRole: firstOther === -1 ? null : (messages[firstOther]?.role ?? null)
  }
}

/** The statements over one `SqlClient`. */
export const makeStatements = (sql: SqlClient.SqlClient) => {
  const columns = {
    conversation: sql.literal(Rows.conversationColumns),
    message: sql.literal(Rows.messageColumns),
    counts: sql.literal(Rows.countColumns),
    record: sql.literal(Rows.recordColumns)
  }

  const findConversation = SqlSchema.findOne({
    Request: Schema.String,
    Result: Rows.ConversationRow,
    execute: (id) => sql`SELECT ${columns.conversation} FROM chat_memory_conversations WHERE conversation_id = ${id}`
  })
  const lockConversation = SqlSchema.findOne({
    Request: Schema.String,
    Result: Rows.ConversationRow,
    execute: (id) =>
      sql`SELECT ${columns.conversation} FROM chat_memory_conversations WHERE conversation_id = ${id} FOR UPDATE`
  })
  const deleteConversationRow = SqlSchema.findOne({
    Request: Schema.String,
    Result: Rows.FoundRow,
    execute: (id) => sql`DELETE FROM chat_memory_conversations WHERE conversation_id = ${id} RETURNING 1 AS found`
  })
  const exists = SqlSchema.findOne({
    Request: Schema.String,
    Result: Rows.FoundRow,
    execute: (id) => sql`SELECT 1 AS found FROM chat_memory_conversations WHERE conversation_id = ${id}`
  })
  const findOrFail = (conversationId: ConversationId) =>
    Effect.flatMap(
      findConversation(conversationId),
      Option.match({
        onNone: () => Effect.fail(new ConversationNotFoundError({ conversationId })),
        onSome: Effect.succeed
      })
    )
  /** Empty results are ambiguous: an empty range, or no conversation. */
  const requireIfEmpty = <A>(conversationId: ConversationId, rows: ReadonlyArray<A>) =>
    rows.length > 0 ?
      Effect.succeed(rows) :
      Effect.flatMap(exists(conversationId), (found) =>
        Option.isSome(found) ? Effect.succeed(rows) : Effect.fail(new ConversationNotFoundError({ conversationId })))

  // One statement, so one round trip and no transaction around it. The upsert takes the
  // conversation row's lock until the statement commits. So concurrent appends, in any process,
  // reserve disjoint, gapless seq ranges in commit order. The same statement inserts the messages
  // with the reserved seqs (`m.i` is each message's 1-based position). A message joining the
  // leading system messages gets no search vector, since it is never a hit.
  // The messages take the user from the conversation's row, so an append naming no user keeps the
  // binding. Their terms are also scoped by the user. An append naming a user applies only to a new
  // conversation, which it binds with its settings, or to one of that user. Otherwise the upsert
  // changes nothing and returns no row, and the caller binds or refuses (`binding.ts`).
  const appendRows = SqlSchema.findOne({
    Request: Schema.Struct({
      id: Schema.String,
      count: Schema.Number,
      system: Schema.Number,
      user: Schema.Number,
      assistant: Schema.Number,
      tool: Schema.Number,
      summary: Schema.Number,
      tokens: Schema.Number,
      leadingSystem: Schema.Number,
      firstTurnRole: Schema.NullOr(Schema.String),
      now: Schema.DateFromSelf,
      /** When the conversation starts if this append creates it: its first message's `createdAt`. */
      startedAt: Schema.String,
      messageRoles: Schema.Array(Schema.String),
      contents: Schema.Array(Schema.String),
      metadata: Schema.Array(Schema.String),
      tokenCounts: Schema.Array(Schema.Number),
      createdAt: Schema.Array(Schema.String),
      /** The latest `createdAt` of the messages. */
      lastSaidAt: Schema.String,
      /** Each message's `tsvector` text (`vectorText`), null for none. */
      search: Schema.Array(Schema.NullOr(Schema.String)),
      /** The conversation's scope in those texts (`scopeOf`). */
      scope: Schema.String,
      /** The user the append names, if any. */
      userId: Schema.NullOr(Schema.String)
    }),
    Result: Rows.ReservedRow,
    execute: (r) =>
      sql`WITH reserved AS (
        INSERT INTO chat_memory_conversations AS c (conversation_id, last_seq, message_count, system_count,
          user_count, assistant_count, tool_count, summary_count, token_count, system_prefix_seq, first_turn_role,
          created_at, updated_at, user_id, last_said_at)
        VALUES (${r.id}, ${r.count}, ${r.count}, ${r.system}, ${r.user}, ${r.assistant}, ${r.tool}, ${r.summary},
          ${r.tokens}, ${r.leadingSystem}, ${r.firstTurnRole}, ${r.startedAt}::timestamptz, ${r.now}, ${r.userId},
          ${r.lastSaidAt}::timestamptz)
        ON CONFLICT (conversation_id) DO UPDATE SET
          last_seq = c.last_seq + EXCLUDED.last_seq,
          message_count = c.message_count + EXCLUDED.message_count,
          system_count = c.system_count + EXCLUDED.system_count,
          user_count = c.user_count + EXCLUDED.user_count,
          assistant_count = c.assistant_count + EXCLUDED.assistant_count,
          tool_count = c.tool_count + EXCLUDED.tool_count,
          summary_count = c.summary_count + EXCLUDED.summary_count,
          token_count = c.token_count + EXCLUDED.token_count,
          system_prefix_seq = CASE WHEN c.system_prefix_seq = c.last_seq
            THEN c.last_seq + EXCLUDED.system_prefix_seq ELSE c.system_prefix_seq END,
          first_turn_role = COALESCE(c.first_turn_role, EXCLUDED.first_turn_role),
          updated_at = EXCLUDED.updated_at,
          last_said_at = GREATEST(c.last_said_at, EXCLUDED.last_said_at)
        WHERE EXCLUDED.user_id IS NULL OR c.user_id = EXCLUDED.user_id
        RETURNING last_seq, message_count, system_prefix_seq, user_id
      ), inserted AS (
        INSERT INTO chat_memory_messages (conversation_id, seq, role, content, metadata, token_count, created_at,
          search, user_id)
        SELECT ${r.id}, reserved.last_seq - ${r.count}::bigint + m.i, m.role, m.content, m.metadata::jsonb,
          m.token_count, m.created_at::timestamptz,
          CASE WHEN reserved.last_seq - ${r.count}::bigint + m.i <= reserved.system_prefix_seq THEN NULL
            WHEN reserved.user_id IS NULL THEN m.search::tsvector
            ELSE ${withUserTerms(sql, sql`m.search`, r.scope, sql`reserved.user_id`)} END,
          reserved.user_id
        FROM reserved CROSS JOIN unnest(${r.messageRoles}::text[], ${r.contents}::text[], ${r.metadata}::text[],
          ${r.tokenCounts}::bigint[], ${r.createdAt}::text[], ${r.search}::text[])
          WITH ORDINALITY AS m(role, content, metadata, token_count, created_at, search, i)
      ), bound AS (
        UPDATE chat_memory_settings s SET user_id = reserved.user_id FROM reserved
        WHERE ${r.userId}::text IS NOT NULL AND s.conversation_id = ${r.id} AND s.user_id IS NULL
      )
      SELECT last_seq, message_count, user_id FROM reserved`
  })
  const insertMessages = (conversationId: ConversationId, messages: ReadonlyArray<Message>, userId: UserId | null) =>
    Effect.forEach(
      Array.chunksOf(messages, insertChunk),
      (chunk) =>
        sql`INSERT INTO chat_memory_messages ${
          sql.insert(chunk.map((m) => ({
            conversation_id: conversationId,
            seq: m.seq,
            role: m.role,
            content: m.content,
            metadata: JSON.stringify(m.metadata),
            token_count: m.tokenCount,
            created_at: DateTime.toDateUtc(m.createdAt),
            user_id: userId
          })))
        }`,
      { discard: true }
    )

  // The planner's row estimate for one conversation's seq range can be far too low. PGlite keeps no
  // statistics, and on a server one conversation may be much longer than the rest. The planner then
  // reads and sorts the whole range instead of walking the key. So with a limit, the range is first
  // narrowed to the seqs that can hold the page. That is `limit` seqs plus every pruned seq
  // (`last_seq - message_count`). The statement then reads at most that many rows, whatever the
  // plan. The conversation's row also tells an empty range from no conversation.
  const selectMessages = SqlSchema.findAll({
    Request: Schema.Struct({
      id: Schema.String,
      after: Schema.Number,
      before: Schema.Number,
      limit: Schema.NullOr(Schema.Number),
      newest: Schema.Boolean
    }),
    Result: Rows.MaybeMessageRow,
    execute: (q) => {
      const missing = sql.literal("(c.last_seq - c.message_count)")
      const range = q.limit === null
        ? sql`seq > ${q.after} AND seq < ${q.before}`
        : q.newest
        ? sql`seq > GREATEST(${q.after}::bigint,
            LEAST(${q.before}::bigint - 1, c.last_seq) - ${q.limit}::bigint - ${missing}) AND seq < ${q.before}`
        : sql`seq > ${q.after} AND seq < LEAST(${q.before}::bigint, ${q.after}::bigint + 1 + ${q.limit}::bigint + ${missing})`
      return sql`SELECT m.* FROM chat_memory_conversations c
        LEFT JOIN LATERAL (
          SELECT ${columns.message} FROM chat_memory_messages
          WHERE conversation_id = c.conversation_id AND ${range}
          ORDER BY seq ${sql.literal(q.newest ? "DESC" : "ASC")} LIMIT ${q.limit}
        ) m ON true
        WHERE c.conversation_id = ${q.id}`
    }
  })
  // The turns holding the messages `seqs` names, in one statement. For each seq, in the order
  // given, a short walk of the primary key finds the user message at or before it and the next one
  // after it. The distinct turns of the first seqs are kept, at most `limit`, and their messages
  // read by range. Each walk first looks `turnReach` seqs away. Without statistics (PGlite), the
  // planner may read and sort the whole range up to the seq rather than walk the key. So the range
  // stays small, and is read whole only for a longer turn. The conversation's row tells no turn
  // from no conversation. Each seq is checked, and each turn read, in a subquery of its own (scalar,
  // or fenced by `OFFSET 0`), never joined. With statistics that think the conversation short, a
  // join would read all of it once per turn.
  const selectTurns = SqlSchema.findAll({
    Request: Schema.Struct({
      id: Schema.String,
      seqs: Schema.Array(Schema.Number),
      before: Schema.Number,
      limit: Schema.NullOr(Schema.Number)
    }),
    Result: Rows.MaybeTurnMessageRow,
    execute: (q) => {
      const userAtOrBefore = (floor: Statement.Fragment) =>
        sql`SELECT u.seq FROM chat_memory_messages u
          WHERE u.conversation_id = c.conversation_id AND u.seq <= h.seq AND u.seq > ${floor} AND u.role = 'user'
          ORDER BY u.seq DESC LIMIT 1`
      const userAfter = (ceiling: Statement.Fragment) =>
        sql`SELECT u.seq FROM chat_memory_messages u
          WHERE u.conversation_id = c.conversation_id AND u.seq > h.seq AND u.seq < ${ceiling} AND u.role = 'user'
          ORDER BY u.seq ASC LIMIT 1`
      const prefix = sql.literal("c.system_prefix_seq")
      return sql`SELECT m.turn_start, m.seq, m.role, m.content, m.metadata, m.token_count, m.created_at
        FROM chat_memory_conversations c
        LEFT JOIN LATERAL (
          SELECT t.turn_start, x.seq, x.role, x.content, x.metadata, x.token_count, x.created_at
          FROM (
            SELECT d.turn_start, d.turn_end FROM (
              SELECT DISTINCT ON (b.turn_start) b.turn_start, b.turn_end, b.i FROM (
                SELECT h.i,
                  coalesce(
                    (${userAtOrBefore(sql`GREATEST(${prefix}, h.seq - ${turnReach})`)}),
                    (${userAtOrBefore(prefix)}),
                    ${prefix} + 1
                  ) AS turn_start,
                  coalesce(
                    (${userAfter(sql`LEAST(${q.before}::bigint, h.seq + ${turnReach})`)}),
                    (${userAfter(sql`${q.before}::bigint`)}),
                    ${q.before}::bigint
                  ) AS turn_end
                FROM unnest(${q.seqs}::bigint[]) WITH ORDINALITY AS h(seq, i)
                WHERE h.seq > c.system_prefix_seq AND h.seq < ${q.before} AND (
                  SELECT e.role FROM chat_memory_messages e
                  WHERE e.conversation_id = c.conversation_id AND e.seq = h.seq
                ) <> 'summary'
              ) b
              ORDER BY b.turn_start, b.i
            ) d
            ORDER BY d.i LIMIT ${q.limit}
          ) t
          CROSS JOIN LATERAL (
            SELECT x.seq, x.role, x.content, x.metadata, x.token_count, x.created_at FROM chat_memory_messages x
            WHERE x.conversation_id = c.conversation_id AND x.seq >= t.turn_start AND x.seq < t.turn_end
              AND x.role <> 'summary'
            OFFSET 0
          ) x
        ) m ON true
        WHERE c.conversation_id = ${q.id}
        ORDER BY m.seq`
    }
  })
  const countRange = SqlSchema.findAll({
    Request: Schema.Struct({ id: Schema.String, after: Schema.Number, before: Schema.Number }),
    Result: Rows.CountsRow,
    execute: (q) =>
      sql`SELECT ${columns.counts} FROM chat_memory_messages
        WHERE conversation_id = ${q.id} AND seq > ${q.after} AND seq < ${q.before}`
  })
  // The window in one statement, so one round trip and one snapshot: no commit lands between the
  // counters and the messages. It calls a function (`readWindow.ts`) whose plan the session keeps.
  const selectWindow = SqlSchema.findOne({
    Request: Schema.Struct({
      id: Schema.String,
      cursor: Schema.Boolean,
      tokenLimit: Schema.Number,
      narrow: Schema.Boolean,
      digest: Schema.Number,
      user: Schema.NullOr(Schema.String)
    }),
    Result: Rows.WindowRow,
    execute: (q) =>
      sql`SELECT * FROM chat_memory_read_window(${q.id}, ${q.cursor}, ${q.tokenLimit}, ${q.narrow}, ${q.digest}, ${q.user})`
  })
  const selectRecords = SqlSchema.findAll({
    Request: Schema.String,
    Result: Rows.RecordRow,
    execute: (id) =>
      sql`SELECT ${columns.record} FROM chat_memory_summarizations WHERE conversation_id = ${id} ORDER BY version`
  })
  const deleteCovered = SqlSchema.findAll({
    Request: Schema.Struct({ id: Schema.String, prefix: Schema.Number, cursor: Schema.Number }),
    Result: Rows.CountsRow,
    execute: (q) =>
      sql`WITH pruned AS (
          DELETE FROM chat_memory_messages
          WHERE conversation_id = ${q.id} AND seq > ${q.prefix} AND seq <= ${q.cursor} AND role <> 'summary'
          RETURNING role, token_count
        ), unembedded AS (
          DELETE FROM chat_memory_embeddings
          WHERE conversation_id = ${q.id} AND seq > ${q.prefix} AND seq <= ${q.cursor}
        )
        SELECT ${columns.counts} FROM pruned`
  })

  const updateConversation = (
    info: RepositoryService.ConversationInfo,
    state: SummaryState,
    at: Date
  ) =>
    sql`UPDATE chat_memory_conversations SET
        narrative = ${state.narrative}, facts = ${JSON.stringify(state.facts)}::jsonb,
        layers = ${JSON.stringify(state.layers)}::jsonb, summary_cursor = ${state.cursor},
        summary_version = ${state.version}, summary_updated_at = ${at}, last_seq = ${info.lastSeq},
        message_count = ${info.messageCount}, system_count = ${info.roleCounts.system},
        user_count = ${info.roleCounts.user}, assistant_count = ${info.roleCounts.assistant},
        tool_count = ${info.roleCounts.tool}, summary_count = ${info.roleCounts.summary},
        token_count = ${info.tokenCount}, updated_at = ${at}
      WHERE conversation_id = ${info.conversationId}`
  const insertRecord = (record: SummarizationRecord, userId: UserId | null) =>
    sql`INSERT INTO chat_memory_summarizations ${
      sql.insert({
        conversation_id: record.conversationId,
        version: record.version,
        from_seq: record.fromSeq,
        to_seq: record.toSeq,
        summary: record.summary,
        summary_truncated: record.summaryTruncated,
        mode: record.mode,
        skill_id: record.skillId,
        model: record.model,
        input_tokens: record.inputTokens,
        output_tokens: record.outputTokens,
        duration_ms: record.durationMs,
        created_at: DateTime.toDateUtc(record.createdAt),
        summary_message_seq: record.summaryMessageSeq,
        user_id: userId
      })
    }`
  const selectSettings = SqlSchema.findOne({
    Request: Schema.String,
    Result: Rows.SettingsRow,
    execute: (id) => sql`SELECT settings FROM chat_memory_settings WHERE conversation_id = ${id}`
  })
  // Returns what is stored, decoded as a read decodes it. The row takes the conversation's user. The
  // conversation's row is read `FOR SHARE`, so a concurrent binding, which locks it, is seen.
  const upsertSettings = SqlSchema.findOne({
    Request: Schema.Struct({ id: Schema.String, settings: Schema.String, now: Schema.DateFromSelf }),
    Result: Rows.SettingsRow,
    execute: (r) =>
      sql`WITH owner AS (
          SELECT user_id FROM chat_memory_conversations WHERE conversation_id = ${r.id} FOR SHARE
        )
        INSERT INTO chat_memory_settings AS s (conversation_id, settings, updated_at, user_id)
        VALUES (${r.id}, ${r.settings}::jsonb, ${r.now}, (SELECT owner.user_id FROM owner))
        ON CONFLICT (conversation_id) DO UPDATE SET settings = EXCLUDED.settings, updated_at = EXCLUDED.updated_at,
          user_id = COALESCE(EXCLUDED.user_id, s.user_id)
        RETURNING settings`
  })
  // The id's settings, its row locked until the transaction ends. An id without settings gets an
  // empty row to lock, which the transaction's write replaces or deletes.
  const lockSettings = (id: ConversationId) =>
    Effect.gen(function*() {
      yield* sql`INSERT INTO chat_memory_settings (conversation_id, settings, updated_at)
        VALUES (${id}, '{}'::jsonb, now()) ON CONFLICT (conversation_id) DO NOTHING`
      const row = yield* lockedSettings(id)
      return Option.map(row, (r) => r.settings)
    })
  const lockedSettings = SqlSchema.findOne({
    Request: Schema.String,
    Result: Rows.SettingsRow,
    execute: (id) => sql`SELECT settings FROM chat_memory_settings WHERE conversation_id = ${id} FOR UPDATE`
  })
  const deleteSettings = SqlSchema.findOne({
    Request: Schema.String,
    Result: Rows.FoundRow,
    execute: (id) => sql`DELETE FROM chat_memory_settings WHERE conversation_id = ${id} RETURNING 1 AS found`
  })

  // The conversation row goes first, so its lock waits for the appends and commits in flight. An id
  // with settings but no messages is found too, holding only its settings.
  const deleteConversation = (conversationId: ConversationId) =>
    Effect.gen(function*() {
      const deleted = yield* deleteConversationRow(conversationId)
      const settings = yield* deleteSettings(conversationId)
      if (Option.isNone(deleted)) {
        if (Option.isNone(settings)) return yield* new ConversationNotFoundError({ conversationId })
        return
      }
      yield* sql`DELETE FROM chat_memory_messages WHERE conversation_id = ${conversationId}`
      yield* sql`DELETE FROM chat_memory_summarizations WHERE conversation_id = ${conversationId}`
      yield* sql`DELETE FROM chat_memory_embeddings WHERE conversation_id = ${conversationId}`
    })

  return {
    findConversation,
    lockConversation,
    findOrFail,
    requireIfEmpty,
    appendRows,
    insertMessages,
    selectMessages,
    countRange,
    selectTurns,
    selectWindow,
    selectRecords,
    deleteCovered,
    updateConversation,
    insertRecord,
    selectSettings,
    lockSettings,
    upsertSettings,
    deleteSettings,
    deleteConversation
  }
}

/** The SQL store's statements. */
export type Statements = ReturnType<typeof makeStatements>
