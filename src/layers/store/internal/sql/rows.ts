/**
 * The SQL store's row schemas, in the tables' snake_case, and their conversion to domain models.
 * node-pg returns `bigint` columns as strings and PGlite as numbers, so integer columns decode from
 * both.
 */
import { Schema } from "effect"
import { ConversationEntry } from "../../../../domain/ConversationEntry.js"
import { ConversationId } from "../../../../domain/ConversationId.js"
import { ConversationSettings } from "../../../../domain/ConversationSettings.js"
import { Fact, FactCategory } from "../../../../domain/Fact.js"
import { Message, MessageMetadata, Role } from "../../../../domain/Message.js"
import { SummarizationRecord, SummaryLayer, SummaryState } from "../../../../domain/SummaryState.js"
import { UserFact } from "../../../../domain/UserFact.js"
import { UserId } from "../../../../domain/UserId.js"
import type { RepositoryService } from "../../../../services/RepositoryService.js"

/** An integer column: a number (PGlite, `int4`) or a decimal string (node-pg `int8`). */
export const SqlInt = Schema.Union(Schema.Int, Schema.compose(Schema.NumberFromString, Schema.Int))

/** A `timestamptz` column: a `Date` (both drivers) or an ISO string. */
export const SqlTimestamp = Schema.Union(Schema.DateTimeUtcFromDate, Schema.DateTimeUtc)

/**
 * A `jsonb` metadata column, checked against `MessageMetadata` but returned as the driver parsed
 * it. Decoding would rebuild the object, and a rebuilt record loses keys such as `__proto__`.
 */
export const SqlMetadata = Schema.declare(Schema.is(MessageMetadata), { identifier: "SqlMessageMetadata" })

/** The columns of a message row. */
export const MessageRow = Schema.Struct({
  seq: SqlInt,
  role: Role,
  content: Schema.String,
  metadata: SqlMetadata,
  token_count: SqlInt,
  created_at: SqlTimestamp
})

/** @internal */
export type MessageRow = typeof MessageRow.Type

/** The columns `SELECT`ed for a message. */
export const messageColumns = "seq, role, content, metadata, token_count, created_at"

/** A message row as a `Message`. The row schema has validated every field. */
export const toMessage = (conversationId: ConversationId, row: MessageRow): Message =>
  new Message({
    conversationId,
    seq: row.seq,
    role: row.role,
    content: row.content,
    metadata: row.metadata,
    tokenCount: row.token_count,
    createdAt: row.created_at
  }, { disableValidation: true })

/** A message row, or the all-null row of a `LEFT JOIN` that matched no message. */
export const MaybeMessageRow = Schema.Union(MessageRow, Schema.Struct({ seq: Schema.Null }))

/** A message of the turns read (`selectTurns`), with its turn's first seq. */
export const TurnMessageRow = Schema.Struct({ ...MessageRow.fields, turn_start: SqlInt })

/** A message row of the turns read, or the all-null row when none matched. */
export const MaybeTurnMessageRow = Schema.Union(TurnMessageRow, Schema.Struct({ seq: Schema.Null }))

/** A conversation row: its counters and its summary state. */
export const ConversationRow = Schema.Struct({
  last_seq: SqlInt,
  message_count: SqlInt,
  system_count: SqlInt,
  user_count: SqlInt,
  assistant_count: SqlInt,
  tool_count: SqlInt,
  summary_count: SqlInt,
  token_count: SqlInt,
  system_prefix_seq: SqlInt,
  first_turn_role: Schema.NullOr(Role),
  narrative: Schema.String,
  facts: Schema.Array(Fact),
  layers: Schema.Array(SummaryLayer),
  summary_cursor: SqlInt,
  summary_version: SqlInt,
  summary_updated_at: Schema.NullOr(SqlTimestamp),
  created_at: SqlTimestamp,
  updated_at: SqlTimestamp,
  /** The conversation's user, null for none (migration 10). */
  user_id: Schema.NullOr(UserId),
  facts_cursor: SqlInt,
  /** The conversation's life (migration 17). */
  incarnation: SqlInt
})

/** @internal */
export type ConversationRow = typeof ConversationRow.Type

/** The columns `SELECT`ed for a conversation. */
export const conversationColumns = "last_seq, message_count, system_count, user_count, assistant_count, tool_count, " +
  "summary_count, token_count, system_prefix_seq, first_turn_role, narrative, facts, layers, summary_cursor, " +
  "summary_version, summary_updated_at, created_at, updated_at, user_id, facts_cursor, incarnation"

/** The counters of a conversation row. */
export const toInfo = (conversationId: ConversationId, row: ConversationRow): RepositoryService.ConversationInfo => ({
  conversationId,
  incarnation: row.incarnation,
  userId: row.user_id,
  factsCursor: row.facts_cursor,
  lastSeq: row.last_seq,
  messageCount: row.message_count,
  roleCounts: {
    system: row.system_count,
    user: row.user_count,
    assistant: row.assistant_count,
    tool: row.tool_count,
    summary: row.summary_count
  },
  tokenCount: row.token_count,
  systemPrefixSeq: row.system_prefix_seq,
  firstTurnRole: row.first_turn_role,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

/** The summary state of a conversation row. */
export const toState = (conversationId: ConversationId, row: ConversationRow): SummaryState =>
  new SummaryState({
    conversationId,
    narrative: row.narrative,
    facts: row.facts,
    layers: row.layers,
    cursor: row.summary_cursor,
    version: row.summary_version,
    updatedAt: row.summary_updated_at
  }, { disableValidation: true })

/** Counts of a range of messages (`count(*)` is `int8`). */
export const CountsRow = Schema.Struct({
  total: SqlInt,
  token_count: SqlInt,
  system: SqlInt,
  user: SqlInt,
  assistant: SqlInt,
  tool: SqlInt,
  summary: SqlInt
})

/** The aggregates `SELECT`ed for a `CountsRow` over a set of messages. */
export const countColumns = "count(*) AS total, coalesce(sum(token_count), 0)::bigint AS token_count, " +
  ["system", "user", "assistant", "tool", "summary"].map((role) =>
    `count(*) FILTER (WHERE role = '${role}') AS "${role}"`
  )
    .join(", ")

/** A counts row as `RangeCounts`. */
export const toCounts = (row: typeof CountsRow.Type): RepositoryService.RangeCounts => ({
  total: row.total,
  tokenCount: row.token_count,
  system: row.system,
  user: row.user,
  assistant: row.assistant,
  tool: row.tool,
  summary: row.summary
})

/** A user fact: a `chat_memory_user_facts` row, or an element of the window's `user_facts`. */
export const UserFactRow = Schema.Struct({
  key: Schema.String,
  value: Schema.NullOr(Schema.String),
  category: FactCategory,
  said_at: SqlTimestamp,
  conversation_id: Schema.NullOr(ConversationId),
  seq: Schema.NullOr(SqlInt)
})

/** The columns `SELECT`ed for a fact. */
export const userFactColumns = "key, value, category, said_at, conversation_id, seq"

/** A fact row as a `UserFact`. The row schema has validated every field. */
export const toUserFact = (row: typeof UserFactRow.Type): UserFact =>
  new UserFact({
    key: row.key,
    value: row.value,
    category: row.category,
    saidAt: row.said_at,
    source: row.conversation_id === null || row.seq === null
      ? null
      : { conversationId: row.conversation_id, seq: row.seq }
  }, { disableValidation: true })

/** A conversation of a user as a list shows it (`listConversations`, the window's `digest`). */
export const EntryRow = Schema.Struct({
  conversation_id: ConversationId,
  created_at: SqlTimestamp,
  last_said_at: SqlTimestamp,
  message_count: SqlInt,
  about: Schema.String
})

/** An entry row as a `ConversationEntry` of `userId`. */
export const toEntry = (userId: UserId, row: typeof EntryRow.Type): ConversationEntry =>
  new ConversationEntry({
    conversationId: row.conversation_id,
    userId,
    startedAt: row.created_at,
    lastSaidAt: row.last_said_at,
    messageCount: row.message_count,
    about: row.about
  }, { disableValidation: true })

/**
 * The window read's single row (see `chat_memory_read_window`): counters and state, the window's
 * bounds, the leading system messages and window as one JSON array, the stored settings, and the
 * user's sections if any.
 */
export const WindowRow = Schema.Struct({
  ...ConversationRow.fields,
  window_after: SqlInt,
  window_floor: SqlInt,
  window_limit: SqlInt,
  /** How many messages the page held before it was cut back (see `selectWindow`). */
  window_rows: SqlInt,
  messages: Schema.Array(Schema.Struct({
    ...MessageRow.fields,
    // JSON numbers, with times in epoch milliseconds as the store writes them, so no text to parse.
    seq: Schema.Int,
    token_count: Schema.Int,
    created_at: Schema.DateTimeUtcFromNumber
  })),
  /** The conversation's stored settings, null for none (migration 8). */
  settings: Schema.NullOr(ConversationSettings),
  /** With a user: the user's live facts, latest said first (migration 11). */
  user_facts: Schema.NullOr(Schema.Array(Schema.Struct({
    ...UserFactRow.fields,
    said_at: Schema.DateTimeUtcFromNumber,
    seq: Schema.NullOr(Schema.Int)
  }))),
  /** With a user: the user's latest other conversations (migration 11). */
  digest: Schema.NullOr(Schema.Array(Schema.Struct({
    ...EntryRow.fields,
    created_at: Schema.DateTimeUtcFromNumber,
    last_said_at: Schema.DateTimeUtcFromNumber,
    message_count: Schema.Int
  })))
})

/** A summarization record row. */
export const RecordRow = Schema.Struct({
  version: SqlInt,
  from_seq: SqlInt,
  to_seq: SqlInt,
  summary: Schema.String,
  summary_truncated: Schema.Boolean,
  mode: Schema.String,
  skill_id: Schema.String,
  model: Schema.NullOr(Schema.String),
  input_tokens: SqlInt,
  output_tokens: SqlInt,
  duration_ms: SqlInt,
  created_at: SqlTimestamp,
  summary_message_seq: Schema.NullOr(SqlInt)
})

/** The columns `SELECT`ed for a record. */
export const recordColumns = "version, from_seq, to_seq, summary, summary_truncated, mode, skill_id, model, " +
  "input_tokens, output_tokens, duration_ms, created_at, summary_message_seq"

/** A record row as a `SummarizationRecord`. */
export const toRecord = (conversationId: ConversationId, row: typeof RecordRow.Type): SummarizationRecord =>
  new SummarizationRecord({
    conversationId,
    version: row.version,
    fromSeq: row.from_seq,
    toSeq: row.to_seq,
    summary: row.summary,
    summaryTruncated: row.summary_truncated,
    mode: row.mode,
    skillId: row.skill_id,
    model: row.model,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    durationMs: row.duration_ms,
    createdAt: row.created_at,
    summaryMessageSeq: row.summary_message_seq
  }, { disableValidation: true })

/**
 * A settings row: the driver-parsed `jsonb` column, decoded by the schema. A stored value that does
 * not decode is a store failure, not a defect.
 */
export const SettingsRow = Schema.Struct({ settings: ConversationSettings })

/** A row that only says whether a conversation exists. */
export const FoundRow = Schema.Struct({ found: Schema.Literal(1) })

/** The seq an append reserved up to, and the conversation's user. */
export const ReservedRow = Schema.Struct({ last_seq: SqlInt, message_count: SqlInt, user_id: Schema.NullOr(UserId) })

/** A conversation's user, read from its row. */
export const OwnerRow = Schema.Struct({ user_id: Schema.NullOr(UserId) })
