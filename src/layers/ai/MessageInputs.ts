/**
 * How `addMessages` reads its list into the messages to store. The list may mix the library's
 * own messages, `@effect/ai` prompt messages and response parts (`Message.AnyInput`).
 *
 * @since 0.1.0
 */
import { Either, ParseResult, Predicate, Schema, type SchemaAST } from "effect"
import { MaxMetadataLength, MaxToolCalls } from "../../domain/internal/messageLimits.js"
import { MaxContentLength } from "../../domain/internal/messageLimits.js"
import { fromUntrusted, isStorable, MaxJsonDepth } from "../../domain/internal/storable.js"
import { type AnyInput, InputRole, type MessageInput, type ToolCall } from "../../domain/Message.js"
import { refusingPrompt } from "../internal/promptInput.js"
import { type Decoded, decodePieces, type Piece } from "./internal/parts.js"

/**
 * A message `MessageInputs` decoded, and where in the caller's list it came from.
 *
 * @since 0.1.0
 * @category models
 */
export interface SourcedInput {
  readonly message: MessageInput
  /** The index of the input it came from; the first, when several response parts make it. */
  readonly source: number
}

/**
 * `schema`, but a `Prompt` is refused with a hint to pass `prompt.content` instead. A Prompt is
 * what a model is sent, most often the whole history, so taking it whole would store it twice.
 */
const refusingPromptAs = <A, I>(schema: Schema.Schema<A, I>, expected: string, pass: string): Schema.Schema<A, I> =>
  refusingPrompt(
    schema,
    `must be ${expected}, not an @effect/ai Prompt: pass ${pass} (the messages not stored yet)`
  )

// As deep as `Message.MessageInput` reads a message. Tool call `params` are a JSON value at level
// 5, and a few more levels are read. So `Json` refuses a value too deep, at its own path.
const maxInputDepth = MaxJsonDepth + 8

// Each input is read once, inside a guard, keeping the caller's key order. The JSON texts of tool
// calls and results must come back byte for byte.
const AnyInputSchema: Schema.Schema<ReadonlyArray<Piece>, AnyInput> = refusingPromptAs(
  fromUntrusted(
    Schema.declare([], {
      decode: () => (input, options, ast) => decodePieces(input, { ast, options }),
      encode: () => (input, _, ast): Decoded<AnyInput> =>
        ParseResult.fail(new ParseResult.Forbidden(ast, input, "is decoded only"))
    }),
    { maxDepth: maxInputDepth, keepOrder: true }
  ),
  "a message",
  "its messages, ...prompt.content"
)

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
 * The list `addMessages` takes, decoded into the messages to store, in order, as
 * `Message.AnyInput` describes. Bad input fails naming its path (`[3].content[1].params`). A
 * message built from response parts is named by its first part. It takes at most `maxInputs`
 * inputs, giving at most `maxMessages` messages.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageInputs = (options: {
  readonly maxMessages: number
  readonly maxInputs: number
}): Schema.Schema<ReadonlyArray<SourcedInput>, ReadonlyArray<AnyInput>> =>
  Schema.transformOrFail(
    // Read once, inside a guard: a proxy or a getter on the list must not crash decoding.
    // Each input guards itself.
    refusingPromptAs(
      fromUntrusted(
        Schema.Array(AnyInputSchema).pipe(
          Schema.maxItems(options.maxInputs, { message: () => `must hold at most ${options.maxInputs} inputs` })
        ),
        { shallow: true }
      ),
      "a list of messages",
      "prompt.content"
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
 * A fast path for the common call: what `MessageInputs` decodes `input` into, without the guard's
 * copy, reading each property once. Every input must be a plain `{ role, content }` object, of a
 * role other than `tool`, with non-empty, storable content of at most `MaxContentLength`
 * characters. `undefined` for anything else, or when reading throws; the caller then decodes with
 * `MessageInputs`. Both give the same messages, as a property test checks.
 *
 * @since 0.1.0
 * @category conversions
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
      // Exactly two own keys, role and content, and no inherited ones.
      if (Reflect.ownKeys(value).length !== 2) return undefined
      if (!Predicate.hasProperty(value, "role") || !Predicate.hasProperty(value, "content")) return undefined
      const role = value.role
      const content = value.content
      // A tool message needs metadata: the call it answers.
      if (role === "tool" || !isInputRole(role)) return undefined
      if (typeof content !== "string" || content.length === 0 || content.length > MaxContentLength) return undefined
      if (!isStorable(content)) return undefined
      out.push({ message: { role, content }, source })
    }
    return out
  } catch {
    // A getter or proxy that throws: the guarded decoding refuses it with a path.
    return undefined
  }
}
