/**
 * Messages: what callers add (`MessageInput`, or the `@effect/ai` prompt messages and response
 * parts that `MessageInputs` reads) and what the store keeps (`Message`).
 *
 * @since 0.1.0
 */
import * as Prompt from "@effect/ai/Prompt"
import * as Response from "@effect/ai/Response"
import { Either, Hash, ParseResult, Predicate, Schema, type SchemaAST } from "effect"
import { ConversationId } from "./ConversationId.js"
import { copyUntrusted, explain, type Limits, tooLarge } from "./internal/untrusted.js"
import {
  canonicalJson,
  fromUntrusted,
  Identifier,
  isStorable,
  Json,
  JsonKey,
  MaxJsonDepth,
  MaxJsonValues,
  reasonOr,
  StorableString
} from "./Text.js"

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
  params: Json,
  /**
   * The params as the JSON text a provider was sent, when its key order is not that of `params`:
   * stores keep JSON objects in canonical key order (see `MessageMetadata`), so `params` alone
   * cannot give the bytes back. Prompts send the value of this text, byte for byte what the first
   * call sent. `MessageInputs` sets it for `@effect/ai` tool calls; a caller may give it, as the
   * JSON text of `params`.
   */
  paramsJson: Schema.optional(StorableString)
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
  /**
   * What a tool message's content is: `text` (the default), the result itself, a string; or
   * `json`, the JSON text of a structured result. Prompts send a `json` result as the value the
   * text encodes, so that a provider gets it as a fresh call sent it (not as a string of JSON).
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

// A valid message nests at most `MaxJsonDepth + 4` levels (tool call `params` are a JSON value at
// level 5: message, metadata, toolCalls, call, params). A few more are read, so that a value too
// deep is refused by `Json`, against its own limit and at its own path.
const maxInputDepth = MaxJsonDepth + 8

/**
 * A message as a caller adds it.
 *
 * Rules beyond the field types: `content` is non-empty (an assistant message that only calls
 * tools may leave it empty), at most `MaxContentLength` long and storable; a `tool` message names
 * the call it answers (`metadata.toolCallId`); only `assistant` messages carry `toolCalls`; a
 * tool message whose `metadata.contentFormat` is `json` has JSON text as content; a tool call's
 * `paramsJson`, when given, is the JSON text of its `params`.
 *
 * The input is read safely (`Text.fromUntrusted`): each property once, inside a guard, so a
 * throwing getter or proxy, a cycle, nesting of any depth, a `Date`, a `Map` or a class instance
 * is refused with a `DataValidationError` naming its path, never a defect; the decoded message
 * shares no object with the input, and its metadata is in canonical form (see `MessageMetadata`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageInput = fromUntrusted(PlainMessage, { maxDepth: maxInputDepth }).annotations({
  identifier: "MessageInput"
})

/**
 * @since 0.1.0
 * @category models
 */
export type MessageInput = typeof MessageInput.Type

/**
 * A stored message. `seq` orders the log (assigned by the store, strictly increasing per
 * conversation); `tokenCount` is computed once, when the message is stored.
 *
 * A store may hand out frozen messages (the in-memory store shares what it stores with every
 * reader, so that none can change it): the structural hash is therefore computed on each call
 * rather than cached on the instance, which a frozen object cannot take.
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

// ---------------------------------------------------------------------------------------------
// @effect/ai input
// ---------------------------------------------------------------------------------------------

/**
 * Anything `addMessages` takes, in a list: a message in the library's own form (`MessageInput`), an
 * `@effect/ai` prompt message (`Prompt.Message`, or encoded as `Prompt.make` takes it), or an
 * `@effect/ai` response part (`Response.AnyPart`, as `LanguageModel.generateText` and `streamText`
 * give them, or encoded). See `MessageInputs` for how they become stored messages.
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

/**
 * A message `MessageInputs` decoded, and where in the caller's list it came from.
 *
 * @since 0.1.0
 * @category models
 */
export interface SourcedInput {
  readonly message: MessageInput
  /** The index of the input it came from: the first one, when several response parts make it. */
  readonly source: number
}

/** What one input says, before the parts of a response are put together into messages. */
type Piece =
  | { readonly _tag: "Message"; readonly message: MessageInput }
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "TextStart"; readonly id: string }
  | { readonly _tag: "TextDelta"; readonly id: string; readonly delta: string }
  | { readonly _tag: "TextEnd"; readonly id: string }
  | { readonly _tag: "ToolCall"; readonly call: ToolCall }
  | { readonly _tag: "ToolResult"; readonly message: MessageInput }
  /** The start or end of a response or of a prompt message: what comes after is a new message. */
  | { readonly _tag: "Boundary" }

type Decoded<A> = Either.Either<A, ParseResult.ParseIssue>

interface DecodeContext {
  readonly ast: SchemaAST.AST
  readonly options: SchemaAST.ParseOptions
}

const boundary: Piece = { _tag: "Boundary" }

const at = (
  path: ReadonlyArray<PropertyKey>,
  actual: unknown,
  issue: ParseResult.ParseIssue
): ParseResult.ParseIssue => {
  const [head, ...tail] = path
  return head === undefined ? issue : new ParseResult.Pointer([head, ...tail], actual, issue)
}

const refuse = (context: DecodeContext, path: ReadonlyArray<PropertyKey>, actual: unknown, reason: string) =>
  ParseResult.fail(at(path, actual, new ParseResult.Type(context.ast, actual, reason)))

const decodeWith = <A, I>(schema: Schema.Schema<A, I>) => {
  const decodeUnknown = ParseResult.decodeUnknownEither(schema)
  return (input: unknown, context: DecodeContext): Decoded<A> => decodeUnknown(input, context.options)
}

const decodePlain = decodeWith(PlainMessage)

/** A message in the library's own form: canonical, as `MessageInput` decodes it. */
const plain = (value: unknown, context: DecodeContext): Decoded<ReadonlyArray<Piece>> =>
  Either.map(decodePlain(canonicalJson(value), context), (message) => [{ _tag: "Message", message }])

const decodeJson = decodeWith(Json)

/**
 * A JSON value of a tool call or result: canonical for the metadata, and as the JSON text a
 * provider is sent (`JSON.stringify`, in the caller's key order).
 */
const jsonValue = (
  value: unknown,
  path: ReadonlyArray<PropertyKey>,
  context: DecodeContext
): Decoded<{ readonly canonical: Json; readonly text: string }> =>
  Either.match(decodeJson(value, { ...context, options: { ...context.options, onExcessProperty: "error" } }), {
    onLeft: (issue) => Either.left(at(path, value, issue)),
    // `value` is the guarded copy, and `Json` took it: plain JSON data, safe to print.
    onRight: (canonical) => Either.right({ canonical, text: JSON.stringify(value) })
  })

const toolCall = (
  part: { readonly id: string; readonly name: string; readonly params: unknown },
  context: DecodeContext
): Decoded<ReadonlyArray<Piece>> =>
  Either.map(jsonValue(part.params, ["params"], context), ({ canonical, text }) => [{
    _tag: "ToolCall",
    // Keys in canonical order. The text is kept only when it says more than the value: its key order.
    call: text === JSON.stringify(canonical)
      ? { id: part.id, name: part.name, params: canonical }
      : { id: part.id, name: part.name, params: canonical, paramsJson: text }
  }])

const toolResult = (
  part: { readonly id: string; readonly name: string; readonly isFailure: boolean },
  result: unknown,
  path: ReadonlyArray<PropertyKey>,
  context: DecodeContext
): Decoded<ReadonlyArray<Piece>> =>
  Either.flatMap(jsonValue(result, path, context), ({ canonical, text }) => {
    // A non-empty string is the result itself, as a tool message has always held it; anything
    // else is held as its JSON text.
    const asText = typeof canonical === "string" && canonical.length > 0
    const content = asText ? canonical : text
    if (content.length > MaxContentLength) {
      return refuse(context, path, result, `must be at most ${MaxContentLength} characters as JSON text`)
    }
    // Keys in canonical order.
    const metadata: MessageMetadataInput = {
      ...(part.isFailure ? { isError: true } : {}),
      toolName: part.name,
      toolCallId: part.id,
      ...(asText ? {} : { contentFormat: "json" as const })
    }
    return Either.right([{ _tag: "ToolResult", message: { role: "tool", content, metadata } }])
  })

// -- response parts ---------------------------------------------------------------------------

const responseFields = {
  [Response.PartTypeId]: Schema.optional(Schema.Literal(Response.PartTypeId)),
  metadata: Schema.optional(Schema.Unknown)
}

const decodeResponseText = decodeWith(
  Schema.Struct({ ...responseFields, type: Schema.Literal("text"), text: StorableString })
)
const decodeTextStart = decodeWith(
  Schema.Struct({ ...responseFields, type: Schema.Literal("text-start"), id: Schema.String })
)
// A delta may end inside a character that the next delta completes: the text is checked whole.
const decodeTextDelta = decodeWith(
  Schema.Struct({ ...responseFields, type: Schema.Literal("text-delta"), id: Schema.String, delta: Schema.String })
)
const decodeTextEnd = decodeWith(
  Schema.Struct({ ...responseFields, type: Schema.Literal("text-end"), id: Schema.String })
)

const decodeResponseToolCall = decodeWith(Schema.Struct({
  ...responseFields,
  type: Schema.Literal("tool-call"),
  id: Identifier,
  name: Identifier,
  params: Schema.Unknown,
  providerName: Schema.optional(Identifier),
  providerExecuted: Schema.optional(Schema.Boolean)
}))

const decodeResponseToolResult = decodeWith(Schema.Struct({
  ...responseFields,
  type: Schema.Literal("tool-result"),
  id: Identifier,
  name: Identifier,
  // Decoded by the tool's schema (it may hold class instances): `encodedResult` is what is sent.
  result: Schema.Unknown,
  encodedResult: Schema.optional(Schema.Unknown),
  isFailure: Schema.Boolean,
  providerName: Schema.optional(Identifier),
  providerExecuted: Schema.optional(Schema.Boolean)
}))

/**
 * Response parts that carry nothing the next request sends back (`Prompt.fromResponseParts` drops
 * them, or the providers do: reasoning without its provider options, files, sources).
 */
const ignoredParts = new Set([
  "reasoning",
  "reasoning-start",
  "reasoning-delta",
  "reasoning-end",
  "tool-params-start",
  "tool-params-delta",
  "tool-params-end",
  "file",
  "source",
  "finish",
  "error"
])

const responsePart = (part: { readonly type: unknown }, context: DecodeContext): Decoded<ReadonlyArray<Piece>> => {
  switch (part.type) {
    case "text":
      return Either.map(decodeResponseText(part, context), ({ text }) => [{ _tag: "Text", text }])
    case "text-start":
      return Either.map(decodeTextStart(part, context), ({ id }) => [{ _tag: "TextStart", id }])
    case "text-delta":
      return Either.map(decodeTextDelta(part, context), ({ delta, id }) => [{ _tag: "TextDelta", id, delta }])
    case "text-end":
      return Either.map(decodeTextEnd(part, context), ({ id }) => [{ _tag: "TextEnd", id }])
    case "tool-call":
      return Either.flatMap(decodeResponseToolCall(part, context), (call) =>
        // A call the provider ran itself is not sent back to it.
        call.providerExecuted === true
          ? Either.right([])
          : toolCall({ id: call.id, name: call.providerName ?? call.name, params: call.params }, context))
    case "tool-result":
      return Either.flatMap(decodeResponseToolResult(part, context), (result) => {
        if (result.providerExecuted === true) return Either.right([])
        const encoded = Object.hasOwn(result, "encodedResult")
        return toolResult(
          { id: result.id, name: result.providerName ?? result.name, isFailure: result.isFailure },
          encoded ? result.encodedResult : result.result,
          [encoded ? "encodedResult" : "result"],
          context
        )
      })
    case "response-metadata":
      // The start of a response: what follows answers what came before it.
      return Either.right([boundary])
    default:
      return typeof part.type === "string" && ignoredParts.has(part.type)
        ? Either.right([])
        : refuse(context, ["type"], part.type, "must be the type of an @effect/ai response part")
  }
}

// -- prompt messages --------------------------------------------------------------------------

const promptPartFields = {
  [Prompt.PartTypeId]: Schema.optional(Schema.Literal(Prompt.PartTypeId)),
  options: Schema.optional(Schema.Unknown)
}

const decodePromptText = decodeWith(
  Schema.Struct({ ...promptPartFields, type: Schema.Literal("text"), text: StorableString })
)

const decodePromptToolCall = decodeWith(Schema.Struct({
  ...promptPartFields,
  type: Schema.Literal("tool-call"),
  id: Identifier,
  name: Identifier,
  params: Schema.Unknown,
  providerExecuted: Schema.optional(Schema.Boolean)
}))

const decodePromptToolResult = decodeWith(Schema.Struct({
  ...promptPartFields,
  type: Schema.Literal("tool-result"),
  id: Identifier,
  name: Identifier,
  isFailure: Schema.Boolean,
  // The encoded result, as a prompt holds it.
  result: Schema.Unknown,
  providerExecuted: Schema.optional(Schema.Boolean)
}))

const decodePromptMessage = decodeWith(Schema.Struct({
  [Prompt.MessageTypeId]: Schema.optional(Schema.Literal(Prompt.MessageTypeId)),
  role: Schema.Literal("system", "user", "assistant", "tool").annotations({
    message: (issue) => ({
      message: reasonOr("must be one of \"system\", \"user\", \"assistant\", \"tool\"")(issue),
      override: true
    })
  }),
  content: Schema.Unknown,
  options: Schema.optional(Schema.Unknown)
}))

const isPart = (u: unknown): u is { readonly type: string } =>
  Predicate.isRecord(u) && Predicate.hasProperty(u, "type") && typeof u.type === "string"

/** The parts of a prompt message, each turned into pieces by `part`, with their paths. */
const promptParts = (
  parts: ReadonlyArray<{ readonly type: string }>,
  part: (part: { readonly type: string }) => Decoded<ReadonlyArray<Piece>>
): Decoded<ReadonlyArray<Piece>> => {
  const out: Array<Piece> = []
  for (let i = 0; i < parts.length; i++) {
    const item = parts[i]
    if (item === undefined) continue
    const decoded = Either.mapLeft(part(item), (issue) => at(["content", i], item, issue))
    if (Either.isLeft(decoded)) return decoded
    out.push(...decoded.right)
  }
  return Either.right(out)
}

const wrongPart = (context: DecodeContext, type: string, allowed: string) =>
  refuse(context, ["type"], type, `must be ${allowed}`)

const promptMessage = (value: unknown, context: DecodeContext): Decoded<ReadonlyArray<Piece>> =>
  Either.flatMap(decodePromptMessage(value, context), (message) => {
    const { content, role } = message
    if (typeof content === "string") {
      return role === "tool"
        ? refuse(context, ["content"], content, "must be a list of tool-result parts")
        : plain({ role, content }, context)
    }
    if (!Array.isArray(content) || !content.every(isPart) || role === "system") {
      return refuse(
        context,
        ["content"],
        content,
        role === "system" ? "must be a string" : "must be a string, or a list of @effect/ai prompt parts"
      )
    }
    switch (role) {
      case "user": {
        const texts: Array<string> = []
        const decoded = promptParts(content, (part) => {
          if (part.type === "file") return refuse(context, [], part.type, "is a file part: only text is stored")
          if (part.type !== "text") return wrongPart(context, part.type, "\"text\" (a user message holds text)")
          return Either.map(decodePromptText(part, context), ({ text }) => {
            texts.push(text)
            return []
          })
        })
        return Either.flatMap(decoded, () => plain({ role, content: texts.join("\n") }, context))
      }
      case "assistant":
        return Either.map(
          promptParts(content, (part) => {
            switch (part.type) {
              case "text":
                return Either.map(decodePromptText(part, context), ({ text }): ReadonlyArray<Piece> => [{
                  _tag: "Text",
                  text
                }])
              case "tool-call":
                return Either.flatMap(
                  decodePromptToolCall(part, context),
                  (call) => call.providerExecuted === true ? Either.right([]) : toolCall(call, context)
                )
              // What a provider does not take back: its reasoning, its files, the results of the tools it ran.
              case "reasoning":
              case "file":
              case "tool-result":
                return Either.right([])
              default:
                return wrongPart(
                  context,
                  part.type,
                  "\"text\", \"tool-call\", \"reasoning\", \"file\" or \"tool-result\""
                )
            }
          }),
          (pieces) => [boundary, ...pieces, boundary]
        )
      case "tool":
        return Either.map(
          promptParts(content, (part) =>
            part.type === "tool-result"
              ? Either.flatMap(
                decodePromptToolResult(part, context),
                (result) =>
                  result.providerExecuted === true
                    ? Either.right([])
                    : toolResult(result, result.result, ["result"], context)
              )
              : wrongPart(context, part.type, "\"tool-result\" (a tool message holds tool results)")),
          (pieces) => [boundary, ...pieces, boundary]
        )
    }
  })

// -- one input --------------------------------------------------------------------------------

// Keys are kept in the caller's order: the JSON texts of tool calls and results must come back
// byte for byte. A message in the library's own form is made canonical before it is decoded.
const inputLimits: Limits = { maxDepth: maxInputDepth, maxValues: MaxJsonValues, shallow: false, keepOrder: true }

const decodeInput = (
  input: unknown,
  options: SchemaAST.ParseOptions,
  ast: SchemaAST.AST
): Decoded<ReadonlyArray<Piece>> => {
  const copy = copyUntrusted(input, inputLimits)
  if (copy.tooLarge) return ParseResult.fail(new ParseResult.Type(ast, input, tooLarge(MaxJsonValues)))
  const context: DecodeContext = { ast, options: { ...options, propertyOrder: "original" } }
  const value = copy.value
  const decoded = !Predicate.isRecord(value)
    ? plain(value, context)
    : Predicate.hasProperty(value, "type") && !Object.hasOwn(value, "role")
    ? responsePart(value, context)
    : Object.hasOwn(value, Prompt.MessageTypeId) ||
        (Predicate.hasProperty(value, "content") && Array.isArray(value.content))
    ? promptMessage(value, context)
    : plain(value, context)
  return Either.mapLeft(decoded, (issue) => explain(issue, copy.problems))
}

const AnyInputSchema: Schema.Schema<ReadonlyArray<Piece>, AnyInput> = Schema.declare([], {
  decode: () => decodeInput,
  encode: () => (input, _, ast): Decoded<AnyInput> =>
    ParseResult.fail(new ParseResult.Forbidden(ast, input, "is decoded only"))
})

/** Puts the pieces of the inputs together into messages, in order. */
const assemble = (
  inputs: ReadonlyArray<ReadonlyArray<Piece>>,
  maxMessages: number,
  ast: SchemaAST.AST
): Decoded<ReadonlyArray<SourcedInput>> => {
  const out: Array<SourcedInput> = []
  // The assistant message being put together from response parts, and the tool results after it.
  let texts: Array<string> = []
  let calls: Array<ToolCall> = []
  let first = -1
  let results: Array<SourcedInput> = []
  const streaming = new Map<string, string>()

  const fail = (source: number, reason: string) =>
    ParseResult.fail(new ParseResult.Pointer(source, inputs, new ParseResult.Type(ast, inputs[source], reason)))

  const flush = (): Decoded<void> => {
    const content = texts.join("\n")
    if (content.length > 0 || calls.length > 0) {
      if (!isStorable(content)) {
        return fail(first, "holds text that is not storable (NUL characters or unpaired surrogates)")
      }
      if (content.length > MaxContentLength) {
        return fail(first, `holds text longer than ${MaxContentLength} characters`)
      }
      if (calls.length > MaxToolCalls) return fail(first, `holds more than ${MaxToolCalls} tool calls`)
      const message: MessageInput = calls.length === 0
        ? { role: "assistant", content }
        : { role: "assistant", content, metadata: { toolCalls: calls } }
      if (calls.length > 0 && JSON.stringify(message.metadata).length > MaxMetadataLength) {
        return fail(first, `holds tool calls longer than ${MaxMetadataLength} characters as JSON`)
      }
      out.push({ message, source: first })
    }
    out.push(...results)
    texts = []
    calls = []
    first = -1
    results = []
    return Either.void
  }

  /** An assistant piece at `source`: after tool results, it starts the next message. */
  const assistant = (source: number): Decoded<void> => {
    const flushed = results.length > 0 ? flush() : Either.void
    if (first < 0) first = source
    return flushed
  }

  for (let source = 0; source < inputs.length; source++) {
    for (const piece of inputs[source] ?? []) {
      let step: Decoded<void> = Either.void
      switch (piece._tag) {
        case "Message":
          step = flush()
          out.push({ message: piece.message, source })
          break
        case "Boundary":
          streaming.clear()
          step = flush()
          break
        case "Text":
          step = assistant(source)
          texts.push(piece.text)
          break
        case "TextStart":
          streaming.set(piece.id, "")
          break
        case "TextDelta": {
          const text = streaming.get(piece.id)
          if (text !== undefined) streaming.set(piece.id, text + piece.delta)
          break
        }
        case "TextEnd": {
          const text = streaming.get(piece.id)
          if (text === undefined) break
          streaming.delete(piece.id)
          step = assistant(source)
          texts.push(text)
          break
        }
        case "ToolCall":
          step = assistant(source)
          calls.push(piece.call)
          break
        case "ToolResult":
          results.push({ message: piece.message, source })
          break
      }
      if (Either.isLeft(step)) return Either.left(step.left)
    }
  }
  const last = flush()
  if (Either.isLeft(last)) return Either.left(last.left)
  return out.length > maxMessages
    ? ParseResult.fail(new ParseResult.Type(ast, inputs, `must hold at most ${maxMessages} messages`))
    : Either.right(out)
}

const SourcedInputs = Schema.declare((u): u is ReadonlyArray<SourcedInput> => Array.isArray(u))

/**
 * The list `addMessages` takes (`AnyInput`s), decoded into the messages to store, in order.
 *
 * - A message in the library's own form is a `MessageInput`.
 * - An `@effect/ai` prompt message: a system message keeps its text; a user message, its text
 *   parts joined by a newline (a file part is refused: only text is stored); an assistant
 *   message, its text and its tool calls; a tool message gives one tool message per result.
 * - `@effect/ai` response parts, as `generateText` or `streamText` gave them (several responses
 *   one after another too, each starting at its `response-metadata` part), become what
 *   `Prompt.fromResponseParts` makes of them: an assistant message (text, streamed text put
 *   together, tool calls), then a tool message per tool result.
 * - Left out, as `Prompt.fromResponseParts` and the providers leave them out of the next request:
 *   reasoning, files and sources a model returned, the tools a provider ran itself, and the
 *   response's metadata, finish and error parts.
 *
 * Tool call params and tool results are JSON kept byte for byte: a result that is not a
 * non-empty string is stored as its JSON text (`metadata.contentFormat: "json"`), and params whose
 * key order is not canonical keep their text (`ToolCall.paramsJson`), so that a context replays
 * to a provider exactly what the fresh call sent. They are JSON values as a provider sends them
 * (`JSON.stringify`), read safely as any input (a `Date` or a class instance in them is refused
 * naming its path).
 *
 * Bad input fails naming the input (`[3].content[1].params`); a message put together from
 * response parts is named by its first part. At most `maxInputs` inputs, giving at most
 * `maxMessages` messages.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageInputs = (options: {
  readonly maxMessages: number
  readonly maxInputs: number
}): Schema.Schema<ReadonlyArray<SourcedInput>, ReadonlyArray<AnyInput>> =>
  Schema.transformOrFail(
    // Read once, inside a guard (a proxy or a getter on the list must not crash decoding); each
    // input guards itself.
    fromUntrusted(
      Schema.Array(AnyInputSchema).pipe(
        Schema.maxItems(options.maxInputs, { message: () => `must hold at most ${options.maxInputs} inputs` })
      ),
      { shallow: true }
    ),
    SourcedInputs,
    {
      strict: true,
      decode: (inputs, _, ast) => assemble(inputs, options.maxMessages, ast),
      encode: (messages, _, ast) => ParseResult.fail(new ParseResult.Forbidden(ast, messages, "is decoded only"))
    }
  )

const isInputRole = Schema.is(InputRole)

/**
 * What `MessageInputs` decodes `input` into, when every input is a plain `{ role, content }`
 * object (no other own key, no metadata) of a role other than `tool`, with non-empty, storable
 * content of at most `MaxContentLength` characters: the common call, checked without the guard's
 * copy, each property read once. `undefined` for anything else, or when reading throws: the caller
 * then decodes with `MessageInputs`, which decides and explains. Both give the same messages (a
 * property test checks it).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodePlainInputs = (
  input: unknown,
  maxMessages: number
): ReadonlyArray<SourcedInput> | undefined => {
  try {
    if (!Array.isArray(input) || Object.getPrototypeOf(input) !== Array.prototype) return undefined
    const length: unknown = input.length
    if (typeof length !== "number" || length > maxMessages) return undefined
    const out: Array<SourcedInput> = []
    for (let source = 0; source < length; source++) {
      const value: unknown = input[source]
      if (!Predicate.isObject(value) || Object.getPrototypeOf(value) !== Object.prototype) return undefined
      // Exactly two own keys, and no inherited ones (the prototype is Object's): role and content.
      if (Reflect.ownKeys(value).length !== 2) return undefined
      if (!Predicate.hasProperty(value, "role") || !Predicate.hasProperty(value, "content")) return undefined
      const role = value.role
      const content = value.content
      // A tool message needs metadata (the call it answers).
      if (role === "tool" || !isInputRole(role)) return undefined
      if (typeof content !== "string" || content.length === 0 || content.length > MaxContentLength) return undefined
      if (!isStorable(content)) return undefined
      out.push({ message: { role, content }, source })
    }
    return out
  } catch {
    // A getter or a proxy that throws: the guarded decoding refuses it with a path.
    return undefined
  }
}
