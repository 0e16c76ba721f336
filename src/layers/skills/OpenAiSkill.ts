/**
 * The OpenAI provider of the model skills: `LanguageModelSkill` over `@effect/ai-openai` (the
 * Responses API), for OpenAI or any compatible server (Ollama, vLLM…) by base URL. The summarizer
 * model is its own, separate from whatever model the host agent uses.
 *
 * @since 0.1.0
 */
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { NodeHttpClient } from "@effect/platform-node"
import { Config, ConfigError, Effect, Either, Layer, Option, Redacted } from "effect"
import type { SkillService } from "../../services/SkillService.js"
import * as LanguageModelSkill from "./LanguageModelSkill.js"

/**
 * The summarizer model when none is configured: a small, cheap one.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultModel = "gpt-4o-mini"

/**
 * @since 0.1.0
 */
export declare namespace OpenAiSkill {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Options {
    /** The API key; stays redacted until the HTTP call. Optional for servers that need none. */
    readonly apiKey?: Redacted.Redacted | undefined
    /** The API's base URL, ending in `/v1` (e.g. `http://localhost:11434/v1`); OpenAI's by default. */
    readonly apiUrl?: string | undefined
    /** The summarizer model, e.g. `gpt-4o-mini`. */
    readonly model: string
    /** Request fields of the Responses API (temperature, max_output_tokens…). */
    readonly config?: Omit<OpenAiLanguageModel.Config.Service, "model"> | undefined
  }
}

/**
 * The skills over OpenAI with typed options, for programmatic use.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: OpenAiSkill.Options): Layer.Layer<SkillService> =>
  LanguageModelSkill.layer({ model: options.model, skillIdPrefix: "openai" }).pipe(
    Layer.provide(
      OpenAiLanguageModel.layer(
        options.config === undefined ? { model: options.model } : { model: options.model, config: options.config }
      )
    ),
    Layer.provide(OpenAiClient.layer({ apiKey: options.apiKey, apiUrl: options.apiUrl })),
    Layer.provide(NodeHttpClient.layerUndici)
  )

const isHttpUrl = (url: string): boolean => URL.canParse(url) && ["http:", "https:"].includes(new URL(url).protocol)

/**
 * The options from the environment: `OPENAI_API_KEY` (redacted), `OPENAI_BASE_URL`,
 * `MEMORY_SUMMARIZER_MODEL` (`gpt-4o-mini` by default). A key is required unless a base URL is
 * set (local servers often need none); an empty key counts as none.
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<OpenAiSkill.Options> = Config.all({
  apiKey: Config.option(Config.redacted("OPENAI_API_KEY")).pipe(
    Config.map(Option.filter((key) => Redacted.value(key).trim().length > 0))
  ),
  apiUrl: Config.option(
    Config.string("OPENAI_BASE_URL").pipe(
      Config.validate({ message: "must be an http(s) URL, e.g. http://localhost:11434/v1", validation: isHttpUrl })
    )
  ),
  model: Config.string("MEMORY_SUMMARIZER_MODEL").pipe(
    Config.validate({ message: "must not be empty", validation: (model) => model.trim().length > 0 }),
    Config.withDefault(defaultModel)
  )
}).pipe(
  Config.mapOrFail(({ apiKey, apiUrl, model }) =>
    Option.isNone(apiKey) && Option.isNone(apiUrl)
      ? Either.left(
        ConfigError.MissingData(
          ["OPENAI_API_KEY"],
          "OPENAI_API_KEY is required unless OPENAI_BASE_URL points to a server that needs no key"
        )
      )
      : Either.right({
        apiKey: Option.getOrUndefined(apiKey),
        apiUrl: Option.getOrUndefined(apiUrl),
        model: model.trim()
      })
  )
)

/**
 * The skills over OpenAI, configured from the environment (`config`); a missing or invalid
 * variable fails the layer's construction with a `ConfigError` naming it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<SkillService, ConfigError.ConfigError> = Layer.unwrapEffect(
  Effect.map(config, layer)
)
