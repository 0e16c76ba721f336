/**
 * The approximate `TokenCounter`: one token per four characters. Free, and close enough for
 * English prose on OpenAI's tokenizers.
 *
 * @since 0.1.0
 */
import { Effect, Layer } from "effect"
import * as TokenCounter from "../../services/TokenCounter.js"

/**
 * Characters counted as one token.
 */
const charactersPerToken = 4

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

/**
 * The approximate counter: `ceil(length / 4)` tokens.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: TokenCounter.TokenCounter.Service = TokenCounter.make({
  name: "approximate",
  count: (text) => Effect.succeed(Math.ceil(text.length / charactersPerToken)),
  truncate: (text, maxTokens) =>
    Effect.sync(() => {
      let end = Math.max(0, Math.floor(maxTokens)) * charactersPerToken
      if (end >= text.length) return text
      // Never cut a surrogate pair in half: the result must stay storable text.
      if (end > 0 && isLowSurrogate(text.charCodeAt(end))) end -= 1
      return text.slice(0, end)
    })
})

/**
 * The approximate counter as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<TokenCounter.TokenCounter> = Layer.succeed(TokenCounter.TokenCounter, make)
