/**
 * What one input of `addMessages` says, as pieces, read from its guarded copy. An input is a
 * message in the library's own form, an `@effect/ai` prompt message, or a response part.
 * `MessageInputs` puts a response's parts together into messages.
 */
import * as Prompt from "@effect/ai/Prompt"
import * as Response from "@effect/ai/Response"
import { Either, ParseResult, Predicate, Schema, type SchemaAST } from "effect"
import { MaxContentLength } from "../../../domain/internal/messageLimits.js"
import { Identifier, Json, StorableString } from "../../../domain/internal/storable.js"
import { InputRole, MessageInput, type MessageMetadataInput, type ToolCall } from "../../../domain/Message.js"

/** What one input says, before the parts of a response are put together into messages. */
export type Piece =
  | { readonly _tag: "Message"; readonly message: MessageInput }
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "TextStart"; readonly id: string }
  | { readonly _tag: "TextDelta"; readonly id: string; readonly delta: string }
  | { readonly _tag: "TextEnd"; readonly id: string }
  | { readonly _tag: "ToolCall"; readonly call: ToolCall }
  | { readonly _tag: "ToolResult"; readonly message: MessageInput }
  /** The start or end of a response or prompt message: what comes after is a new message. */
  | { readonly _tag: "Boundary" }

export type Decoded<A> = Either.Either<A, ParseResult.ParseIssue>

export interface DecodeContext {
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

const decodeMessage = decodeWith(MessageInput)

/** A message in the library's own form: canonical, as `MessageInput` decodes it. */
const plain = (value: unknown, context: DecodeContext): Decoded<ReadonlyArray<Piece>> =>
  Either.map(decodeMessage(value, context), (message) => [{ _tag: "Message", message }])

const decodeJson = decodeWith(Json)

/**
 * A JSON value of a tool call or result: canonical for the metadata, and as the JSON text a
 * provider is sent, in the caller's key order.
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
    // Keys in canonical order. The text is kept only when its key order differs.
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
    // A non-empty string is the result itself, as a tool message holds it. Anything else is held
    // as its JSON text.
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
 * Response parts that carry nothing the next request sends back. `Prompt.fromResponseParts` or
 * the providers drop them.
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
  role: InputRole,
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
              // What a provider does not take back: its reasoning, files, and its own tools' results.
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

/**
 * The pieces of one input, from its guarded copy. Keys stay in the caller's order, as the JSON
 * texts of tool calls and results must come back byte for byte. A message in the library's own
 * form is made canonical as `MessageInput` decodes it.
 */
export const decodePieces = (value: unknown, context: DecodeContext): Decoded<ReadonlyArray<Piece>> =>
  !Predicate.isRecord(value)
    ? plain(value, context)
    : Predicate.hasProperty(value, "type") && !Object.hasOwn(value, "role")
    ? responsePart(value, context)
    : Object.hasOwn(value, Prompt.MessageTypeId) ||
        (Predicate.hasProperty(value, "content") && Array.isArray(value.content))
    ? promptMessage(value, context)
    : plain(value, context)
