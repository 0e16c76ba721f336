/**
 * The OpenAI provider of the model skills: `LanguageModelSkill` over `@effect/ai-openai` (the
 * Responses API), for OpenAI or any compatible server (Ollama, vLLM…) by base URL. The summarizer
 * model is its own, separate from whatever model the host agent uses.
 *
 * @since 0.1.0
 */
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { NodeHttpClient } from "@effect/platform-node"
import { Config, type ConfigError, Effect, Layer, type Redacted } from "effect"
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

/**
 * The skills over OpenAI with their options read from `config`, as `PgClient.layerConfig` does:
 * a `Config` of the options, or a struct of a `Config` per option. The variable names are the
 * caller's; `ChatMemoryConfig.openAi` reads DESIGN §6's. A missing or invalid value fails the
 * layer's construction with a `ConfigError` naming it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  config: Config.Config.Wrap<OpenAiSkill.Options>
): Layer.Layer<SkillService, ConfigError.ConfigError> => Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
