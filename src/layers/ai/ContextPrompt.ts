/**
 * A memory context as `@effect/ai` prompt messages: what the model is sent on the next turn.
 *
 * @since 0.1.0
 */
import * as Prompt from "@effect/ai/Prompt"
import { Option, Schema } from "effect"
import {
  digestText,
  factsText,
  omissionText,
  recentLabel,
  summaryText,
  userFactsText
} from "../../domain/internal/contextText.js"
import { recalledText } from "../../domain/internal/recall.js"
import { type MemoryContext } from "../../domain/MemoryContext.js"
import type { Message } from "../../domain/Message.js"

/**
 * How a context becomes prompt messages.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptOptions {
  /**
   * The role of the messages that carry the facts and the summary. `user`, the default, gives text
   * a model wrote no more authority than a user has. `system` gives it the authority of the host's
   * own instructions: use it only when every writer is trusted.
   */
  readonly recordRole?: "user" | "system" | undefined
}

const parseJsonText = Schema.decodeUnknownOption(Schema.parseJson())

/**
 * The value of a stored JSON text, else the text itself. The text was checked when added, so the
 * fallback only serves a store that no longer holds what it was given.
 */
const jsonOf = (text: string): unknown => Option.getOrElse(parseJsonText(text), () => text)

const record = (text: string, role: "user" | "system"): Prompt.MessageEncoded =>
  role === "system" ? { role: "system", content: text } : { role: "user", content: [{ type: "text", text }] }

/** A message as a prompt message. When `dated`, a user message follows its date and time. */
const toPromptMessage = (message: Message, dated = false): Prompt.MessageEncoded | undefined => {
  switch (message.role) {
    case "system":
      return { role: "system", content: message.content }
    case "user":
      return {
        role: "user",
        content: dated
          ? [{ type: "text", text: recentLabel(message) }, { type: "text", text: message.content }]
          : [{ type: "text", text: message.content }]
      }
    case "assistant": {
      const text: Array<Prompt.AssistantMessagePartEncoded> = message.content.length > 0
        ? [{ type: "text", text: message.content }]
        : []
      const calls = (message.metadata.toolCalls ?? []).map((call): Prompt.AssistantMessagePartEncoded => ({
        type: "tool-call",
        id: call.id,
        name: call.name,
        // The text keeps the key order the provider was sent; `params` has the store's.
        params: call.paramsJson === undefined ? call.params : jsonOf(call.paramsJson),
        providerExecuted: false
      }))
      return { role: "assistant", content: [...text, ...calls] }
    }
    case "tool":
      return {
        role: "tool",
        content: [{
          type: "tool-result",
          id: message.metadata.toolCallId ?? "",
          name: message.metadata.toolName ?? "tool",
          isFailure: message.metadata.isError ?? false,
          // A structured result goes back as its value, so the provider encodes it once, as the
          // fresh call did.
          result: message.metadata.contentFormat === "json" ? jsonOf(message.content) : message.content,
          providerExecuted: false
        }]
      }
    case "summary":
      // Summary messages are records of the log; the context carries the summary separately.
      return undefined
  }
}

/**
 * The context as `@effect/ai` prompt messages, in order. The leading system messages stay system
 * messages. Facts and the summary become messages of `options.recordRole`, `user` by default.
 * Tool calls and results become tool-call and tool-result parts, with their JSON as it was added:
 * a structured result as its value, params in their key order (see `Message.AnyInput`). So a
 * provider is sent what the fresh call sent. When the conversation spans more than one day
 * (`MemoryContext.dated`), each recent user message starts with a text part holding its date and
 * time, and the recalled turns' labels show dates.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toPromptMessages = (context: MemoryContext, options?: PromptOptions): Array<Prompt.MessageEncoded> => {
  const role = options?.recordRole ?? "user"
  const out: Array<Prompt.MessageEncoded> = []
  for (const message of context.system) {
    const encoded = toPromptMessage(message)
    if (encoded !== undefined) out.push(encoded)
  }
  if (context.userFacts.length > 0) out.push(record(userFactsText(context.userFacts), role))
  if (context.digest.length > 0) out.push(record(digestText(context.digest), role))
  if (context.facts.length > 0) out.push(record(factsText(context.facts), role))
  if (context.summary !== null) out.push(record(summaryText(context.summary), role))
  if (context.omissionAnnounced && context.turnsOmitted > 0) out.push(record(omissionText(context.turnsOmitted), role))
  for (const message of context.recent) {
    const encoded = toPromptMessage(message, context.dated)
    if (encoded !== undefined) out.push(encoded)
  }
  if (context.recalled.length > 0) out.push(record(recalledText(context.recalled, { dated: context.dated }), role))
  return out
}

/**
 * The context as an `@effect/ai` `Prompt`, ready for `LanguageModel.generateText`.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toPrompt = (context: MemoryContext, options?: PromptOptions): Prompt.Prompt =>
  Prompt.make(toPromptMessages(context, options))

/**
 * The full prompt for the host's next model call: the context, then the user's current message.
 * Pass it as `prompt` to `LanguageModel.generateText`. Then store the user message and the
 * response's parts with `addMessages`, or let `ChatTurn.generateText` do all three.
 *
 * @example
 * ```ts
 * import { LanguageModel } from "@effect/ai"
 * import { Effect } from "effect"
 * import { ChatMemory, ContextPrompt } from "effect-chat-memory"
 *
 * // A turn by hand: the context, the model, then the exchange stored (what ChatTurn.generateText does).
 * export const turn = (conversationId: string, line: string) =>
 *   Effect.gen(function*() {
 *     const memory = yield* ChatMemory.ChatMemoryService
 *     const context = yield* memory.getContext(conversationId, { query: line })
 *     const response = yield* LanguageModel.generateText({ prompt: ContextPrompt.withUserMessage(context, line) })
 *     yield* memory.addMessages(conversationId, [{ role: "user", content: line }, ...response.content])
 *     return response.text
 *   })
 * ```
 *
 * @since 0.1.0
 * @category conversions
 */
export const withUserMessage = (context: MemoryContext, text: string, options?: PromptOptions): Prompt.Prompt =>
  Prompt.make([...toPromptMessages(context, options), { role: "user", content: [{ type: "text", text }] }])
