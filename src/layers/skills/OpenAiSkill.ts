/**
 * The OpenAI provider of the model skills: `LanguageModelSkill` over `@effect/ai-openai`'s
 * Responses API. It serves OpenAI or any compatible server (Ollama, vLLM…) by base URL. The
 * summarizer model is its own, apart from the host agent's. The summarize skill may run a prompt
 * hosted by OpenAI instead of ours (`summaryPrompt`).
 *
 * @since 0.1.0
 */
import * as OpenAiClient from "@effect/ai-openai/OpenAiClient"
import type * as OpenAiLanguageModel from "@effect/ai-openai/OpenAiLanguageModel"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Config, type ConfigError, Effect, Layer, type Redacted } from "effect"
import { SkillService } from "../../services/SkillService.js"
import * as LanguageModelSkill from "./LanguageModelSkill.js"

/**
 * The options and types of `OpenAiSkill`.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace OpenAiSkill {
  /**
   * The options of the skills over OpenAI.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Options {
    /** The API key; stays redacted until the HTTP call. Optional for servers that need none. */
    readonly apiKey?: Redacted.Redacted | undefined
    /** The API's base URL, ending in `/v1` (`http://localhost:11434/v1`). OpenAI's by default. */
    readonly apiUrl?: string | undefined
    /** The summarizer model, e.g. `gpt-4o-mini`. */
    readonly model: string
    /** Request fields of the Responses API (temperature, max_output_tokens…). */
    readonly config?: Omit<OpenAiLanguageModel.Config.Service, "model"> | undefined
    /**
     * A prompt hosted by OpenAI for the summarize skill (`PROMPT_ID_SUMMARY_GLOBAL`,
     * `PROMPT_VERSION_SUMMARY_GLOBAL`): see `HostedPrompt`. Unset: our prompt.
     */
    readonly summaryPrompt?: HostedPrompt | undefined
  }

  /**
   * A prompt kept on OpenAI's side, run by reference (the Responses API's `prompt` field).
   * Summarize requests then carry `prompt: { id, version }`, and the input text alone
   * (`Prompts.summaryInput`) with no system message. A retry after an answer over its cap adds
   * that answer and the overrun, as two more turns. The request still names `model`, which
   * overrides the prompt's own. Extract-facts requests keep our prompt, as their answer follows
   * our schema, which a summary prompt does not describe.
   *
   * @since 0.1.0
   * @category models
   */
  export interface HostedPrompt {
    /** The prompt's id, e.g. `pmpt_abc123`. */
    readonly id: string
    /** The version to run, such as `"2"`. Unset, the version published on OpenAI. */
    readonly version?: string | undefined
  }
}

/**
 * How the hosted prompt is named in the skill id: `prompt:<id>:<version>`, or `prompt:<id>` for
 * the published version (e.g. `openai/summarize@prompt:pmpt_abc:2`).
 */
const hostedPromptLabel = (prompt: OpenAiSkill.HostedPrompt): string =>
  prompt.version === undefined ? `prompt:${prompt.id}` : `prompt:${prompt.id}:${prompt.version}`

/**
 * Builds the skills over the `OpenAiClient` in context. With a hosted summary prompt, only the
 * summarize skill's requests carry it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: OpenAiSkill.Options
): Effect.Effect<SkillService.Service, never, OpenAiClient.OpenAiClient> =>
  Effect.gen(function*() {
    // Loaded here, not with the package's root, as the module loads gpt-tokenizer.
    const OpenAiLanguageModel = yield* Effect.promise(() => import("@effect/ai-openai/OpenAiLanguageModel"))
    const config = options.config ?? {}
    const skillOptions = { model: options.model, skillIdPrefix: "openai" }
    const model = yield* OpenAiLanguageModel.make({ model: options.model, config })
    const skill = yield* Effect.provideService(
      LanguageModelSkill.make(skillOptions),
      LanguageModel.LanguageModel,
      model
    )
    const hosted = options.summaryPrompt
    if (hosted === undefined) return skill
    const prompt = hosted.version === undefined ? { id: hosted.id } : { id: hosted.id, version: hosted.version }
    const hostedModel = yield* OpenAiLanguageModel.make({ model: options.model, config: { ...config, prompt } })
    const summarizer = yield* Effect.provideService(
      LanguageModelSkill.make({ ...skillOptions, summarizeInstructions: { hosted: hostedPromptLabel(hosted) } }),
      LanguageModel.LanguageModel,
      hostedModel
    )
    return SkillService.of({ summarize: summarizer.summarize, extractFacts: skill.extractFacts })
  })

/**
 * The skills over OpenAI with typed options, for programmatic use.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: OpenAiSkill.Options): Layer.Layer<SkillService> =>
  Layer.effect(SkillService, make(options)).pipe(
    Layer.provide(OpenAiClient.layer({ apiKey: options.apiKey, apiUrl: options.apiUrl })),
    Layer.provide(NodeHttpClient.layerUndici)
  )

/**
 * The skills over OpenAI with their options read from `config`, as `PgClient.layerConfig` does:
 * a `Config` of the options, or a struct of a `Config` per option. The variable names are the
 * caller's; `ChatMemoryConfig.openAi` reads the memory's environment table. A missing or invalid
 * value fails the layer's construction with a `ConfigError` naming it.
 *
 * @example
 * ```ts
 * import { Config } from "effect"
 * import { OpenAiSkill } from "effect-chat-memory"
 *
 * // A cheap OpenAI model writes the summaries; the app names its variables.
 * export const Summarizer = OpenAiSkill.layerConfig({
 *   apiKey: Config.redacted("APP_OPENAI_KEY"),
 *   model: Config.withDefault(Config.string("APP_SUMMARY_MODEL"), "gpt-4o-mini")
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  config: Config.Config.Wrap<OpenAiSkill.Options>
): Layer.Layer<SkillService, ConfigError.ConfigError> => Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
