/**
 * The exact `TokenCounter`: counts with an `@effect/ai` `Tokenizer`, by default OpenAI's o200k
 * encoding (GPT-4o, GPT-4.1, o-series) from `gpt-tokenizer`.
 *
 * @since 0.1.0
 */
import { AiError, type Prompt, Tokenizer } from "@effect/ai"
import { Effect, Layer } from "effect"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import * as TokenCounter from "../../services/TokenCounter.js"

// `OpenAiTokenizer` of `@effect/ai-openai` always encodes with cl100k and adds chat framing to
// every count, so the o200k encoding is wrapped here as a plain-text `Tokenizer`.
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
 * @since 0.1.0
 * @category constructors
 */
export const o200kTokenizer: Tokenizer.Service = Tokenizer.make({
  tokenize: (prompt) =>
    Effect.try({
      try: () => encode(promptText(prompt)),
      catch: (cause) =>
        new AiError.UnknownError({ module: "ExactTokenCounter", method: "tokenize", description: "o200k", cause })
    })
})

/**
 * A counter over any `Tokenizer`. `truncate` finds the longest prefix that fits by bisection,
 * on code point boundaries.
 *
 * A tokenizer failure is a defect here: the tokenizers this runs with encode locally and cannot
 * fail on a string, so a failure means a broken tokenizer, not a condition to handle.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromTokenizer = (tokenizer: Tokenizer.Service, name: string): TokenCounter.TokenCounter.Service => {
  const count = (text: string): Effect.Effect<number> =>
    text.length === 0
      ? Effect.succeed(0)
      : Effect.orDie(Effect.map(tokenizer.tokenize(text), (tokens) => tokens.length))
  return TokenCounter.make({
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
}

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
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<TokenCounter.TokenCounter> = Layer.succeed(
  TokenCounter.TokenCounter,
  fromTokenizer(o200kTokenizer, "o200k_base")
)
