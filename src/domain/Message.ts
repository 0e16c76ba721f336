/**
 * Messages: what callers add (`MessageInput`, `AnyInput`) and what the store keeps (`Message`).
 *
 * @since 0.1.0
 */
import type * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import { Either, Hash, ParseResult, Schema } from "effect"
import { ConversationId } from "./ConversationId.js"
import { CreatedAt, MaxContentLength, MaxMetadataLength, MaxToolCalls } from "./internal/messageLimits.js"
import { fromUntrusted, Identifier, Json, JsonKey, MaxJsonDepth, StorableString } from "./internal/storable.js"
import { reasonOr } from "./internal/untrusted.js"

/**
 * Every role a stored message can have. `summary` is written by the library only.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Role = Schema.Literal("system", "user", "assistant", "tool", "summary")

/**
 * The role of a stored message.
 *
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
 * A role a caller may add.
 *
 * @since 0.1.0
 * @category models
 */
export type InputRole = typeof InputRole.Type

/**
 * A tool call made by an assistant message.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCall = Schema.Struct({
  id: Identifier,
  name: Identifier,
  params: Json,
  /**
   * The params as the JSON text sent to the provider, when its key order differs from `params`.
   * Stores keep JSON objects in canonical key order (see `MessageMetadata`), so `params` alone
   * cannot give the bytes back. Prompts send the value of this text, byte for byte as first sent.
   * `addMessages` sets it for `@effect/ai` tool calls. A caller may give it, as the JSON text of
   * `params`.
   */
  paramsJson: Schema.optional(StorableString)
}).annotations({ identifier: "ToolCall" })

/**
 * A tool call, as the `ToolCall` schema decodes it.
 *
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
  /**
   * The form of a tool message's content: `text` (the default), a plain string result, or `json`,
   * the JSON text of a structured result. Prompts send a `json` result as the value it encodes,
   * as a fresh call sent it, not as a string of JSON.
   */
  contentFormat: Schema.optional(
    Schema.Literal("text", "json").annotations({
      message: (issue) => ({ message: reasonOr("must be \"text\" or \"json\"")(issue), override: true })
    })
  ),
  /** Free-form host data, stored and returned as given. */
  attributes: Schema.optional(Schema.Record({ key: JsonKey, value: Json }))
}

/**
 * Metadata a caller may attach to a message. Unknown keys are refused, so a typo never
 * disappears silently. Free-form data goes in `attributes`. At most `MaxMetadataLength`
 * characters as JSON.
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
 * Metadata a caller attaches to a message.
 *
 * @since 0.1.0
 * @category models
 */
export type MessageMetadataInput = typeof MessageMetadataInput.Type

/**
 * Metadata of a stored message: the caller's, plus links the library writes.
 *
 * Every store returns it as canonical JSON (see `Text.fromUntrusted`). Object keys follow
 * PostgreSQL's `jsonb` order: shorter keys first (length in UTF-8 bytes), then byte order.
 * Integer-like keys still come first, as in any JavaScript object. `-0` is `0`, and there are no
 * `undefined` properties. `addMessages` already returns it in this form.
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
 * A stored message's metadata, in canonical form.
 *
 * @since 0.1.0
 * @category models
 */
export type MessageMetadata = typeof MessageMetadata.Type

const JsonText = Schema.parseJson(Json)
const decodeJsonText = ParseResult.decodeUnknownEither(JsonText)

/** The value of a JSON text, in canonical form, or why it is not JSON a store can hold. */
const parseJsonText = (text: string): Either.Either<Json, string> =>
  Either.mapLeft(decodeJsonText(text, { onExcessProperty: "error" }), (issue) => {
    const [first] = ParseResult.ArrayFormatter.formatIssueSync(issue)
    const at = first === undefined || first.path.length === 0 ? "" : ` (at ${first.path.map(String).join(".")})`
    return `${first?.message ?? "is invalid"}${at}`
  })

/** The message of `MessageInput`, without the guard that reads it. */
const PlainMessage = Schema.Struct({
  role: InputRole,
  content: StorableString.pipe(
    Schema.maxLength(MaxContentLength, { message: () => `must be at most ${MaxContentLength} characters` })
  ),
  metadata: Schema.optional(MessageMetadataInput),
  /** When it was said; the time of the write when left out. */
  createdAt: Schema.optional(CreatedAt)
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
    const format = message.metadata?.contentFormat
    if (format !== undefined && message.role !== "tool") {
      return { path: ["metadata", "contentFormat"], message: "is allowed on tool messages only" }
    }
    if (format === "json") {
      const parsed = parseJsonText(message.content)
      if (Either.isLeft(parsed)) {
        return { path: ["content"], message: `must be JSON text (metadata.contentFormat is "json"): ${parsed.left}` }
      }
    }
    for (let i = 0; i < toolCalls.length; i++) {
      const call = toolCalls[i]
      if (call?.paramsJson === undefined) continue
      const path = ["metadata", "toolCalls", i, "paramsJson"]
      const parsed = parseJsonText(call.paramsJson)
      if (Either.isLeft(parsed)) return { path, message: `must be JSON text: ${parsed.left}` }
      // Both sides are canonical, so equal values print alike.
      if (JSON.stringify(parsed.right) !== JSON.stringify(call.params)) {
        return { path, message: "must be the JSON text of params" }
      }
    }
    return true
  })
)

// A valid message nests at most `MaxJsonDepth + 4` levels: tool call `params` sit at level 5
// (message, metadata, toolCalls, call, params). A few more levels are read, so that `Json`
// refuses a value too deep, with its own limit and path.
const maxInputDepth = MaxJsonDepth + 8

/**
 * A message as a caller adds it.
 *
 * Rules beyond the field types:
 *
 * - `content` is storable, at most `MaxContentLength` characters, and non-empty. Only an
 *   assistant message that calls tools may leave it empty.
 * - A `tool` message names the call it answers (`metadata.toolCallId`).
 * - Only `assistant` messages carry `toolCalls`.
 * - A tool message whose `metadata.contentFormat` is `json` has JSON text as content.
 * - A tool call's `paramsJson`, when given, is the JSON text of its `params`.
 * - `createdAt` (`CreatedAt`: ISO 8601 text with a zone) is when the message was said. Left out,
 *   it is the time of the write. `addMessages` refuses one more than `MaxClockSkewMillis` ahead of
 *   the write. An earlier one is kept whatever the times before it: the seq orders the log.
 *
 * The input is read safely (`Text.fromUntrusted`): each property once, inside a guard. A throwing
 * getter or proxy, a cycle, too deep nesting, a `Date`, a `Map` or a class instance fails with a
 * `DataValidationError` naming its path, never a defect. The decoded message shares no object
 * with the input, and its metadata is canonical (see `MessageMetadata`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageInput = fromUntrusted(PlainMessage, { maxDepth: maxInputDepth }).annotations({
  identifier: "MessageInput"
})

/**
 * A message a caller adds, as the `MessageInput` schema decodes it.
 *
 * @since 0.1.0
 * @category models
 */
export type MessageInput = typeof MessageInput.Type

/**
 * A stored message. `seq` orders the log: the store assigns it, strictly increasing per
 * conversation. `tokenCount` is counted once, when the message is stored. `createdAt` is when it
 * was said: the time its caller gave, else the time of the write. Times need not increase.
 *
 * A store may hand out frozen messages: the in-memory store shares them with every reader, so
 * that none can change them. So the structural hash is computed on each call, not cached.
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
}) {
  /**
   * The structural hash, computed on each call (a frozen message cannot cache it).
   *
   * @since 0.1.0
   */
  [Hash.symbol](): number {
    return Hash.structure(this)
  }
}

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

/**
 * Anything `addMessages` takes in its list. How each becomes stored messages:
 *
 * - A `MessageInput`, the library's own form, is stored as it is.
 * - An `@effect/ai` prompt message (`Prompt.Message`, or encoded as `Prompt.make` takes it): a
 *   system message keeps its text. A user message keeps its text parts, joined by a newline. A
 *   file part is refused: only text is stored. An assistant message keeps its text and tool
 *   calls. A tool message gives one tool message per result.
 * - `@effect/ai` response parts (`Response.AnyPart`, or encoded), as `LanguageModel.generateText`
 *   or `streamText` give them, become what `Prompt.fromResponseParts` makes of them. That is an
 *   assistant message (text, streamed text joined, tool calls), then a tool message per result.
 *   Several responses may follow one another, each starting at its `response-metadata` part.
 * - Left out, as `Prompt.fromResponseParts` and the providers leave them out of the next request:
 *   reasoning, files and sources a model returned, tools a provider ran itself, and the
 *   response's metadata, finish and error parts.
 *
 * Tool call params and tool results are JSON kept byte for byte, so that a context replays
 * exactly what the fresh call sent. A result that is not a non-empty string is stored as its JSON
 * text (`metadata.contentFormat: "json"`). Params whose key order is not canonical keep their
 * text (`ToolCall.paramsJson`). They are JSON values as a provider sends them (`JSON.stringify`),
 * read safely as any input: a `Date` or a class instance in them is refused, naming its path.
 *
 * Bad input fails naming its place in the input (`[3].content[1].params`). A message built from
 * response parts is named by its first part.
 *
 * @since 0.1.0
 * @category models
 */
export type AnyInput =
  | typeof MessageInput.Encoded
  | Prompt.Message
  | Prompt.MessageEncoded
  | Response.AnyPart
  | Response.AnyPartEncoded
