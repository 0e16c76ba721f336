/**
 * Reading a conversation transcript: JSONL of `{ conversation?, role, content, metadata?,
 * createdAt? }`, or a JSON array. Consecutive entries with the same `conversation` are one
 * conversation of one user. A transcript without it is one conversation.
 */
import { FileSystem } from "@effect/platform"
import { DateTime, Effect, ParseResult, Predicate, Schema } from "effect"
import { createdAtProblem } from "../domain/internal/messageLimits.js"
import { MessageInput } from "../domain/Message.js"
import { formatPath } from "../errors/internal/decode.js"
import { fileProblem } from "./Errors.js"

/**
 * A transcript that cannot be read, with where the bad entry is: its 1-based line in JSONL, or its
 * 1-based position in a JSON array.
 */
export class TranscriptError extends Schema.TaggedError<TranscriptError>()("TranscriptError", {
  path: Schema.String,
  line: Schema.optional(Schema.Int),
  entry: Schema.optional(Schema.Int),
  reason: Schema.String
}) {
  override get message(): string {
    const where = this.line !== undefined
      ? ` line ${this.line}:`
      : this.entry !== undefined
      ? ` entry ${this.entry}:`
      : ""
    return `${this.path}:${where} ${this.reason}`
  }
}

/** Where an entry is. */
type Place = { readonly line: number } | { readonly entry: number } | {}

const decodeMessage = Schema.decodeUnknownEither(MessageInput, { errors: "first", onExcessProperty: "error" })

/** A message of a transcript, and its conversation: null for the transcript's only one. */
export interface Entry {
  readonly conversation: string | null
  readonly message: MessageInput
}

const isConversationName = (value: unknown): value is string =>
  typeof value === "string" && value.trim().length > 0 && value.length <= 200

const parseEntry = (
  path: string,
  place: Place,
  value: unknown,
  now: DateTime.Utc
): Effect.Effect<Entry, TranscriptError> => {
  let conversation: string | null = null
  let fields = value
  if (Predicate.isRecord(value) && "conversation" in value) {
    const { conversation: name, ...rest } = value
    if (!isConversationName(name)) {
      return Effect.fail(
        new TranscriptError({ ...place, path, reason: "invalid conversation: must be a name of 1 to 200 characters" })
      )
    }
    conversation = name
    fields = rest
  }
  const decoded = decodeMessage(fields)
  if (decoded._tag === "Right") {
    // `addMessages` would refuse it too, but without the line.
    const late = decoded.right.createdAt === undefined ? undefined : createdAtProblem(decoded.right.createdAt, now)
    return late === undefined
      ? Effect.succeed({ conversation, message: decoded.right })
      : Effect.fail(new TranscriptError({ ...place, path, reason: `invalid createdAt: ${late}` }))
  }
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
  const field = formatPath(issue?.path ?? [], "")
  return Effect.fail(
    new TranscriptError({
      ...place,
      path,
      reason: `invalid ${field === "input" ? "message" : field}: ${issue?.message}`
    })
  )
}

const parseJson = (path: string, place: Place, text: string) =>
  Effect.try({
    try: (): unknown => JSON.parse(text),
    catch: () => new TranscriptError({ ...place, path, reason: "not valid JSON" })
  })

/**
 * Parses a transcript's text: a JSON array of messages, or one JSON message per line, skipping
 * blank lines. A message's `createdAt` must not lie ahead of the clock by more than `addMessages`
 * allows.
 */
export const parseEntries = (path: string, text: string): Effect.Effect<ReadonlyArray<Entry>, TranscriptError> =>
  Effect.gen(function*() {
    const messages: Array<Entry> = []
    const now = yield* DateTime.now
    if (text.trimStart().startsWith("[")) {
      const entries = yield* parseJson(path, {}, text)
      if (!Array.isArray(entries)) return yield* new TranscriptError({ path, reason: "expected a JSON array" })
      for (const [i, entry] of entries.entries()) messages.push(yield* parseEntry(path, { entry: i + 1 }, entry, now))
    } else {
      for (const [i, raw] of text.split("\n").entries()) {
        if (raw.trim().length === 0) continue
        const place = { line: i + 1 }
        messages.push(yield* parseEntry(path, place, yield* parseJson(path, place, raw), now))
      }
    }
    if (messages.length === 0) return yield* new TranscriptError({ path, reason: "holds no messages" })
    const named = messages.filter((entry) => entry.conversation !== null).length
    if (named > 0 && named < messages.length) {
      return yield* new TranscriptError({ path, reason: "names the conversation of some messages but not all" })
    }
    return messages
  })

/** Parses a transcript's text into its messages, whatever conversation each belongs to. */
export const parse = (path: string, text: string): Effect.Effect<ReadonlyArray<MessageInput>, TranscriptError> =>
  Effect.map(parseEntries(path, text), (entries) => entries.map((entry) => entry.message))

/** Reads and parses a transcript file into its entries. */
export const readEntries = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((error) =>
        new TranscriptError({
          path,
          reason: fileProblem(error)
        })
      )
    )
    return yield* parseEntries(path, text)
  })

/** Reads and parses a transcript file into its messages. */
export const read = (path: string) => Effect.map(readEntries(path), (entries) => entries.map((entry) => entry.message))

/** A message read from a transcript as `addMessages` takes it: its `createdAt` as ISO 8601 text. */
export const toInput = (message: MessageInput): typeof MessageInput.Encoded => {
  const { createdAt, ...rest } = message
  return createdAt === undefined ? rest : { ...rest, createdAt: DateTime.formatIso(createdAt) }
}

/**
 * Splits messages into the chunks an agent would add turn by turn. The opening, up to the first
 * user message, goes with the first turn. Each later chunk starts at a user message.
 */
export const turnsOf = (messages: ReadonlyArray<MessageInput>): ReadonlyArray<ReadonlyArray<MessageInput>> => {
  const chunks: Array<Array<MessageInput>> = []
  let current: Array<MessageInput> = []
  let seenUser = false
  for (const message of messages) {
    if (message.role === "user" && seenUser) {
      chunks.push(current)
      current = []
    }
    if (message.role === "user") seenUser = true
    current.push(message)
  }
  if (current.length > 0) chunks.push(current)
  return chunks
}

/** A turn of a transcript, and its conversation: null for the transcript's only one. */
export interface ConversationTurn {
  readonly conversation: string | null
  readonly messages: ReadonlyArray<MessageInput>
}

/**
 * Splits entries into turns as `turnsOf` does, each conversation on its own. A turn never spans
 * two conversations.
 */
export const conversationTurnsOf = (entries: ReadonlyArray<Entry>): ReadonlyArray<ConversationTurn> => {
  const turns: Array<ConversationTurn> = []
  let start = 0
  for (let i = 1; i <= entries.length; i++) {
    if (i < entries.length && entries[i]?.conversation === entries[start]?.conversation) continue
    const conversation = entries[start]?.conversation ?? null
    for (const messages of turnsOf(entries.slice(start, i).map((entry) => entry.message))) {
      turns.push({ conversation, messages })
    }
    start = i
  }
  return turns
}
