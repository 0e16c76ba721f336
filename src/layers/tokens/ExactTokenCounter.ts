/**
 * The exact `TokenCounter`: counts with an `@effect/ai` `Tokenizer`. The default is OpenAI's
 * o200k encoding (GPT-4o, GPT-4.1, o-series) from `gpt-tokenizer`, in time linear in the text.
 *
 * @since 0.1.0
 */
import * as AiError from "@effect/ai/AiError"
import type * as Prompt from "@effect/ai/Prompt"
import * as Tokenizer from "@effect/ai/Tokenizer"
import { Effect, Layer } from "effect"
import * as TokenCounter from "../../services/TokenCounter.js"
import * as O200k from "./internal/o200k.js"

// `@effect/ai-openai`'s `OpenAiTokenizer` always encodes with cl100k and adds chat framing to
// every count. So the o200k encoding is wrapped here as a plain-text `Tokenizer`.
const promptText = (prompt: Prompt.Prompt): string => {
  const parts: Array<string> = []
  for (const message of prompt.content) {
    if (message.role === "system") {
      parts.push(message.content)
      continue
    }
    for (const part of message.content) {
      switch (part.type) {
        case "text":
        case "reasoning":
          parts.push(part.text)
          break
        case "tool-call":
          parts.push(JSON.stringify(part.params))
          break
        case "tool-result":
          parts.push(JSON.stringify(part.result))
          break
        case "file":
          break
      }
    }
  }
  return parts.join("\n")
}

/**
 * OpenAI's o200k encoding as an `@effect/ai` `Tokenizer`: the tokens of the prompt's text parts.
 *
 * Linear in the text's length. Plain `gpt-tokenizer` takes time in the square of the longest run
 * without a split point: 16 s for 100,000 times "a". The tokens are `gpt-tokenizer`'s own, except
 * within a run of over 8,192 bytes without a split point. Such a run is encoded in chunks of that
 * size, off by a few tokens per chunk, on text no person writes. Text that looks like a control
 * token (`<|endoftext|>`) is encoded as its characters.
 *
 * @since 0.1.0
 * @category constructors
 */
export const o200kTokenizer: Tokenizer.Service = Tokenizer.make({
  tokenize: (prompt) =>
    Effect.try({
      try: () => O200k.encode(promptText(prompt)),
      catch: (cause) =>
        new AiError.UnknownError({ module: "ExactTokenCounter", method: "tokenize", description: "o200k", cause })
    })
})

const fromCount = (name: string, count: (text: string) => Effect.Effect<number>): TokenCounter.TokenCounter.Service =>
  TokenCounter.make({
    name,
    count,
    truncate: (text, maxTokens) =>
      Effect.gen(function*() {
        if ((yield* count(text)) <= maxTokens) return text
        const points = Array.from(text)
        let lo = 0
        let hi = points.length
        while (lo < hi) {
          const mid = (lo + hi + 1) >>> 1
          if ((yield* count(points.slice(0, mid).join(""))) <= maxTokens) lo = mid
          else hi = mid - 1
        }
        return points.slice(0, lo).join("")
      })
  })

/**
 * A counter over any `Tokenizer`. `truncate` finds the longest prefix that fits by bisection,
 * on code point boundaries.
 *
 * A tokenizer failure is a defect here. The tokenizers this runs with encode locally and cannot
 * fail on a string, so a failure means a broken tokenizer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromTokenizer = (tokenizer: Tokenizer.Service, name: string): TokenCounter.TokenCounter.Service =>
  fromCount(
    name,
    (text) =>
      text.length === 0
        ? Effect.succeed(0)
        : Effect.orDie(Effect.map(tokenizer.tokenize(text), (tokens) => tokens.length))
  )

/**
 * The exact counter with OpenAI's o200k encoding: the counts of `o200kTokenizer`, without
 * building the token arrays.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: TokenCounter.TokenCounter.Service = fromCount(
  "o200k_base",
  (text) => Effect.sync(() => O200k.count(text))
)

/**
 * The exact counter with the `Tokenizer` found in the context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerFromTokenizer = (name: string): Layer.Layer<TokenCounter.TokenCounter, never, Tokenizer.Tokenizer> =>
  Layer.effect(
    TokenCounter.TokenCounter,
    Effect.map(Tokenizer.Tokenizer, (tokenizer) => fromTokenizer(tokenizer, name))
  )

/**
 * The exact counter with OpenAI's o200k encoding.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatMemory } from "effect-chat-memory"
 * import * as ExactTokenCounter from "effect-chat-memory/ExactTokenCounter"
 *
 * // Tokens as GPT-4o counts them (o200k), rather than characters / 4.
 * Effect.runPromise(ExactTokenCounter.make.count("Hello, world!")).then((tokens) => assert.strictEqual(tokens, 4))
 *
 * // The composed memory takes it by name.
 * export const MemoryLive = ChatMemory.layerLive({ tokenizer: "exact" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<TokenCounter.TokenCounter> = Layer.succeed(TokenCounter.TokenCounter, make)
