/**
 * Messages: what callers add (`MessageInput`) and what the store keeps (`Message`).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { ConversationId } from "./ConversationId.js"
import { fromUntrusted, Identifier, Json, JsonKey, MaxJsonDepth, reasonOr, StorableString } from "./Text.js"

/**
 * Every role a stored message can have. `summary` is written by the library only.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Role = Schema.Literal("system", "user", "assistant", "tool", "summary")

/**
 * @since 0.1.0
 * @category models
 */
export type Role = typeof Role.Type

/**
 * The roles a caller may add.
 *
 * @since 0.1.0
 * @category schemas
 */
export const InputRole = Schema.Literal("system", "user", "assistant", "tool").annotations({
  message: (issue) => ({
    message: reasonOr("must be one of \"system\", \"user\", \"assistant\", \"tool\"")(issue),
    override: true
  })
})

/**
 * @since 0.1.0
 * @category models
 */
export type InputRole = typeof InputRole.Type

/**
 * The longest message content accepted, in UTF-16 code units (4 Mi).
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxContentLength = 4 * 1024 * 1024

/**
 * The longest metadata accepted, as the length of its JSON text (`JSON.stringify`), in UTF-16 code
 * units (1 Mi). Each JSON value in it (`attributes`, tool call `params`) also nests at most
 * `MaxJsonDepth` (32) levels.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxMetadataLength = 1024 * 1024

/**
 * The most tool calls one assistant message may carry.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxToolCalls = 128

/**
 * A tool call made by an assistant message.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCall = Schema.Struct({
  id: Identifier,
  name: Identifier,
  params: Json
}).annotations({ identifier: "ToolCall" })

/**
 * @since 0.1.0
 * @category models
 */
export type ToolCall = typeof ToolCall.Type

const metadataFields = {
  /** Which variant of the host's model produced an assistant message ("mini", "deep-dive", …). */
  modelVariant: Schema.optional(Identifier),
  /** Tool calls made by an assistant message. */
  toolCalls: Schema.optional(
    Schema.Array(ToolCall).pipe(
      Schema.maxItems(MaxToolCalls, { message: () => `must hold at most ${MaxToolCalls} tool calls` })
    )
  ),
  /** The call a tool message answers. */
  toolCallId: Schema.optional(Identifier),
  /** The tool that produced a tool message. */
  toolName: Schema.optional(Identifier),
  /** Whether a tool message reports a failed tool execution. */
  isError: Schema.optional(Schema.Boolean),
  /** Free-form host data, stored and returned as given. */
  attributes: Schema.optional(Schema.Record({ key: JsonKey, value: Json }))
}

/**
 * Metadata a caller may attach to a message. Unknown keys are refused, so a typo never
 * disappears silently; free-form data goes in `attributes`. At most `MaxMetadataLength` long as
 * JSON.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageMetadataInput = Schema.Struct(metadataFields).annotations({ identifier: "MessageMetadataInput" })
  .pipe(
    Schema.filter((metadata) =>
      // The decoded value is plain JSON data (no getters, no cycles, bounded depth): safe to print.
      JSON.stringify(metadata).length <= MaxMetadataLength ||
      `must be at most ${MaxMetadataLength} characters long as JSON`
    )
  )

/**
 * @since 0.1.0
 * @category models
 */
export type MessageMetadataInput = typeof MessageMetadataInput.Type

/**
 * Metadata of a stored message: the caller's, plus links the library writes.
 *
 * It is JSON, and every store returns it in one form, the canonical one of `Text.canonicalJson`:
 * object keys in the order PostgreSQL's `jsonb` keeps them (shorter keys first, counted in UTF-8
 * bytes, then in byte order; integer-like keys first, as in any JavaScript object), `-0` as `0`,
 * no `undefined` properties. `addMessages` already returns it in that form.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageMetadata = Schema.Struct({
  ...metadataFields,
  /** On a `summary` message: the version of the summary state (and record) it shows. */
  summaryMetadataId: Schema.optional(Schema.NonNegativeInt)
}).annotations({ identifier: "MessageMetadata" })

/**
 * @since 0.1.0
 * @category models
 */
export type MessageMetadata = typeof MessageMetadata.Type

/**
 * A message as a caller adds it.
 *
 * Rules beyond the field types: `content` is non-empty (an assistant message that only calls
 * tools may leave it empty), at most `MaxContentLength` long and storable; a `tool` message names
 * the call it answers (`metadata.toolCallId`); only `assistant` messages carry `toolCalls`.
 *
 * The input is read safely (`Text.fromUntrusted`): each property once, inside a guard, so a
 * throwing getter or proxy, a cycle, nesting of any depth, a `Date`, a `Map` or a class instance
 * is refused with a `DataValidationError` naming its path, never a defect; the decoded message
 * shares no object with the input, and its metadata is in canonical form (see `MessageMetadata`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageInput = fromUntrusted(
  Schema.Struct({
    role: InputRole,
    content: StorableString.pipe(
      Schema.maxLength(MaxContentLength, { message: () => `must be at most ${MaxContentLength} characters` })
    ),
    metadata: Schema.optional(MessageMetadataInput)
  }).pipe(
    Schema.filter((message) => {
      const toolCalls = message.metadata?.toolCalls ?? []
      if (message.content.length === 0 && !(message.role === "assistant" && toolCalls.length > 0)) {
        return { path: ["content"], message: "must not be empty (only an assistant message with tool calls may be)" }
      }
      if (message.role === "tool" && message.metadata?.toolCallId === undefined) {
        return { path: ["metadata", "toolCallId"], message: "is required on a tool message" }
      }
      if (message.role !== "assistant" && message.metadata?.toolCalls !== undefined) {
        return { path: ["metadata", "toolCalls"], message: "is allowed on assistant messages only" }
      }
      return true
    })
  ),
  {
    // A valid message nests at most `MaxJsonDepth + 4` levels (tool call `params` are a JSON value at
    // level 5: message, metadata, toolCalls, call, params). A few more are read, so that a value too
    // deep is refused by `Json`, against its own limit and at its own path.
    maxDepth: MaxJsonDepth + 8
  }
).annotations({ identifier: "MessageInput" })

/**
 * @since 0.1.0
 * @category models
 */
export type MessageInput = typeof MessageInput.Type

/**
 * A stored message. `seq` orders the log (assigned by the store, strictly increasing per
 * conversation); `tokenCount` is computed once, when the message is stored.
 *
 * @since 0.1.0
 * @category schemas
 */
export class Message extends Schema.Class<Message>("Message")({
  conversationId: ConversationId,
  seq: Schema.Int.pipe(Schema.positive()),
  role: Role,
  content: Schema.String,
  metadata: MessageMetadata,
  tokenCount: Schema.NonNegativeInt,
  createdAt: Schema.DateTimeUtc
}) {}

/**
 * A message ready to be appended: validated, counted and stamped, waiting for its `seq`.
 *
 * @since 0.1.0
 * @category models
 */
export interface NewMessage {
  readonly role: Role
  readonly content: string
  readonly metadata: MessageMetadata
  readonly tokenCount: number
  readonly createdAt: Message["createdAt"]
}
