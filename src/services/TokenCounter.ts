/**
 * The port that counts tokens: approximately (characters / 4) or exactly with a model's tokenizer.
 *
 * @since 0.1.0
 */
import { Context, Effect } from "effect"
import { MessageOverhead } from "../domain/internal/messageLimits.js"
import type { MessageInput } from "../domain/Message.js"

/**
 * Counts tokens. A message's count is computed once, when it is stored, and reused ever after. So
 * the counter runs on the write path only, plus the few texts the memory adds: facts, summary.
 *
 * Laws:
 * - `count("")` is 0, and `count` never fails.
 * - `truncate(text, n)` is a prefix of `text` with `count(truncate(text, n)) <= n`, and is `text`
 *   itself when `count(text) <= n`.
 * - `countMessage(m)` is `count` of its content and tool calls, plus 4. That is the tokens a chat
 *   format spends on a message besides its content.
 *
 * @since 0.1.0
 * @category tags
 */
export class TokenCounter extends Context.Tag("effect-chat-memory/TokenCounter")<
  TokenCounter,
  TokenCounter.Service
>() {}

/**
 * The shape of the service (`Service`) and the types it takes and gives.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace TokenCounter {
  /**
   * The counter's operations.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** A name for logs and stats, e.g. `approximate` or `o200k_base`. */
    readonly name: string
    /** Tokens of a text. */
    readonly count: (text: string) => Effect.Effect<number>
    /** Tokens a message takes in a prompt. */
    readonly countMessage: (message: Pick<MessageInput, "content" | "metadata">) => Effect.Effect<number>
    /** The longest prefix of `text` that takes at most `maxTokens` tokens. */
    readonly truncate: (text: string, maxTokens: number) => Effect.Effect<string>
  }
}

/**
 * Builds a counter from `count` and `truncate`. `countMessage` follows from them.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly name: string
  readonly count: (text: string) => Effect.Effect<number>
  readonly truncate: (text: string, maxTokens: number) => Effect.Effect<string>
}): TokenCounter.Service => ({
  name: options.name,
  count: options.count,
  truncate: options.truncate,
  countMessage: (message) => {
    const toolCalls = message.metadata?.toolCalls
    const content = options.count(message.content)
    return toolCalls === undefined || toolCalls.length === 0
      ? Effect.map(content, (n) => n + MessageOverhead)
      : Effect.zipWith(content, options.count(JSON.stringify(toolCalls)), (a, b) => a + b + MessageOverhead)
  }
})
