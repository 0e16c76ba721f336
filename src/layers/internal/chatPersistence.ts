/**
 * What `ChatPersistence` works out without effects: the app's edit of a chat's history, the
 * messages as the memory keeps them, the check of a call's new messages, and the prompt a context
 * or a continued turn becomes.
 */
import * as Prompt from "@effect/ai/Prompt"
import { Array as Arr, Effect, Either, ParseResult, Schema } from "effect"
import { MemoryContext } from "../../domain/MemoryContext.js"
import type { Message } from "../../domain/Message.js"
import { DataValidationError } from "../../errors/DataValidationError.js"
import { formatPath } from "../../errors/internal/decode.js"
import { MaxInputsPerCall, MaxMessagesPerCall } from "../../services/ChatMemoryService.js"
import { type PromptOptions, toPromptMessages } from "../ai/ContextPrompt.js"
import { MessageInputs } from "../ai/MessageInputs.js"

/** What the app did to `history` since the memory last set it. */
export type Edit =
  | { readonly _tag: "None" }
  | { readonly _tag: "Cleared" }
  | { readonly _tag: "Appended"; readonly messages: ReadonlyArray<Prompt.Message> }
  | { readonly _tag: "Rewritten" }

const sameMessage = (a: Prompt.Message | undefined, b: Prompt.Message | undefined): boolean =>
  a === b || JSON.stringify(a) === JSON.stringify(b)

export const editOf = (synced: Prompt.Prompt, history: Prompt.Prompt): Edit => {
  if (history === synced) return { _tag: "None" }
  if (history.content.length === 0) return synced.content.length === 0 ? { _tag: "None" } : { _tag: "Cleared" }
  if (history.content.length < synced.content.length) return { _tag: "Rewritten" }
  for (let i = 0; i < synced.content.length; i++) {
    if (!sameMessage(synced.content[i], history.content[i])) return { _tag: "Rewritten" }
  }
  return history.content.length === synced.content.length
    ? { _tag: "None" }
    : { _tag: "Appended", messages: history.content.slice(synced.content.length) }
}

/**
 * A message as the memory keeps it. The memory stores text, so a user message's file parts are
 * left out. A message of files alone keeps a note of each, so that its turn keeps its user message.
 */
export const kept = (message: Prompt.Message): Prompt.Message => {
  if (message.role !== "user" || !message.content.some((part) => part.type === "file")) return message
  const texts = message.content.flatMap((part) => (part.type === "text" ? [part] : []))
  const notes = message.content.flatMap((part) =>
    part.type === "file" ? [Prompt.makePart("text", { text: `[a file, ${part.mediaType}, not kept]` })] : []
  )
  return Prompt.makeMessage("user", { content: texts.length > 0 ? texts : notes })
}

const decodeInputs = Schema.decodeUnknownEither(
  MessageInputs({ maxMessages: MaxMessagesPerCall, maxInputs: MaxInputsPerCall }),
  { errors: "first", onExcessProperty: "error" }
)

/**
 * Refuses, before the model is called, the new messages `addMessages` would refuse after it: the
 * app's unsaved additions to `history` (from index `at`), then the prompt's messages. The error
 * names the field where the app wrote it.
 */
export const checkInputs = (
  operation: string,
  appended: ReadonlyArray<Prompt.Message>,
  at: number,
  added: ReadonlyArray<Prompt.Message>
): Effect.Effect<void, DataValidationError> =>
  Either.match(decodeInputs([...appended, ...added].map(kept)), {
    onRight: () => Effect.void,
    onLeft: (error) => {
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
      const path = issue?.path ?? []
      const [index, ...rest] = path
      return Effect.fail(
        new DataValidationError({
          operation,
          path: typeof index !== "number"
            ? formatPath(path, "prompt")
            : formatPath(
              rest,
              index < appended.length ? `history[${at + index}]` : `prompt[${index - appended.length}]`
            ),
          reason: issue?.message ?? "is invalid"
        })
      )
    }
  })

/** The text of the user messages among `messages`, if any: the recall query of a call. */
export const userText = (messages: ReadonlyArray<Prompt.Message>): string | undefined => {
  const texts = messages.flatMap((message) =>
    message.role === "user" ? message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])) : []
  )
  return texts.length === 0 ? undefined : texts.join("\n")
}

/**
 * The context as a prompt. The recalled block is rendered last, before a new user message. A call
 * that continues a turn gets it before the turn's user message instead. The turn's tool calls,
 * their results and the call's new messages then stay together at the end.
 */
export const contextPrompt = (
  context: MemoryContext,
  continuing: boolean,
  options: { readonly recordRole?: PromptOptions["recordRole"] }
): Prompt.Prompt => {
  const messages = toPromptMessages(context, { recordRole: options.recordRole })
  const recalled = context.recalled.length > 0 && continuing ? messages.pop() : undefined
  if (recalled === undefined) return Prompt.make(messages)
  const recentStart = messages.length - context.recent.filter((message) => message.role !== "summary").length
  let at = messages.length
  for (let i = messages.length - 1; i >= recentStart && at === messages.length; i--) {
    if (messages[i]?.role === "user") at = i
  }
  messages.splice(at, 0, recalled)
  return Prompt.make(messages)
}

/**
 * The context with the turn a call continues shown whole, last. What the context showed of the
 * turn is left out of `recent` and `recalled`, so nothing is sent twice. A turn the context left
 * out no longer counts as omitted, so the omission note does not name it.
 */
export const withTurn = (context: MemoryContext, turn: Arr.NonEmptyReadonlyArray<Message>): MemoryContext => {
  const start = Arr.headNonEmpty(turn).seq
  const shown = context.recent.some((message) => message.seq >= start)
  const omitted = shown ? [] : turn.filter((message) => message.seq > context.summarizedUpTo)
  return new MemoryContext({
    ...context,
    recent: [...context.recent.filter((message) => message.seq < start), ...turn],
    recalled: context.recalled.filter((recalled) => recalled.conversationId !== undefined || recalled.toSeq < start),
    turnsOmitted: omitted.length > 0 ? Math.max(0, context.turnsOmitted - 1) : context.turnsOmitted,
    messagesOmitted: Math.max(0, context.messagesOmitted - omitted.length)
  })
}
