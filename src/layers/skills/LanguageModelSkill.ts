/**
 * The `SkillService` over an `@effect/ai` language model. It summarizes with `generateText`, and
 * extracts facts and a narrative with `generateObject`. The provider's layer supplies the
 * `LanguageModel` (see `OpenAiSkill`).
 *
 * @since 0.1.0
 */
import type * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import type * as Tool from "@effect/ai/Tool"
import { Effect, Layer, Option, Schema } from "effect"
import { FactCategory } from "../../domain/Fact.js"
import { applyFactChanges } from "../../domain/internal/facts.js"
import { SkillExecutionError } from "../../errors/SkillExecutionError.js"
import { SkillService } from "../../services/SkillService.js"
import {
  extractFactsMessages,
  extractFactsPromptVersion,
  summarizeMessages,
  summarizePromptVersion
} from "./internal/prompts.js"

/**
 * One fact of the model's answer. Every field is required, and nullable where optional, as strict
 * structured outputs demand. Provenance is not asked for: the model does not see message seqs.
 */
const ExtractedFact = Schema.Struct({
  key: Schema.String.annotations({ description: "A short stable snake_case name; a known fact's key to update it" }),
  value: Schema.String.annotations({ description: "The fact, verbatim where possible" }),
  category: FactCategory,
  confidence: Schema.NullOr(Schema.Number).annotations({ description: "From 0 to 1, or null" })
})

/**
 * The structured output of the extract-facts skill: facts new or changed by the new turns, the keys
 * of known facts that no longer hold, and the updated narrative.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Extraction = Schema.Struct({
  facts: Schema.Array(ExtractedFact).annotations({ description: "Facts new or changed by the new turns only" }),
  remove: Schema.Array(Schema.String).annotations({ description: "Keys of known facts that no longer hold" }),
  narrative: Schema.String.annotations({ description: "The updated running summary" })
}).annotations({ description: "An update of a conversation's memory" })

/**
 * The options and types of `LanguageModelSkill`.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace LanguageModelSkill {
  /**
   * The options of the skills over a language model.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Options {
    /**
     * The model's name, recorded with each output. The provider layer chooses the model itself.
     * Left out, the name is the response's `modelId` (its `response-metadata` part), or `unknown`.
     */
    readonly model?: string | undefined
    /** The first part of the skill ids: `openai` in `openai/summarize@1`. `language-model` by default. */
    readonly skillIdPrefix?: string | undefined
    /**
     * Where the summarize skill's instructions come from. `"built-in"`, the default: our system
     * prompt before the input (`Prompts.summarizeSystemPrompt`). `{ hosted: label }`: the
     * provider's request configuration, such as an OpenAI hosted prompt (see `OpenAiSkill`). The
     * request then carries the input text alone, and `label` stands for the prompt version in the
     * skill id (`openai/summarize@prompt:pmpt_abc:2`). The extract-facts skill always runs our
     * prompt, as its answer follows our schema (`Extraction`).
     */
    readonly summarizeInstructions?: "built-in" | { readonly hosted: string } | undefined
  }
}

/** The model named by the options, else by the response's metadata part. */
const modelOf = <Tools extends Record<string, Tool.Any>>(
  options: LanguageModelSkill.Options,
  content: ReadonlyArray<Response.Part<Tools>>
): string => {
  if (options.model !== undefined) return options.model
  for (const part of content) {
    if (part.type === "response-metadata") return Option.getOrElse(part.modelId, () => "unknown")
  }
  return "unknown"
}

type Classified = Pick<SkillExecutionError, "reason" | "retryable" | "detail">

/** The path of a URL, never its query (where credentials sometimes travel). */
const pathOf = (url: string): string => (URL.canParse(url) ? new URL(url).pathname : "(invalid URL)")

const ErrorBody = Schema.parseJson(Schema.Struct({
  error: Schema.Struct({
    code: Schema.optional(Schema.NullOr(Schema.String)),
    type: Schema.optional(Schema.NullOr(Schema.String))
  })
}))

const decodeErrorBody = Schema.decodeUnknownOption(ErrorBody)

/** The provider's error code or type from a JSON error body, if a short identifier. */
const errorCode = (body: string | undefined): string | undefined =>
  Option.getOrUndefined(Option.flatMap(decodeErrorBody(body), ({ error }) => {
    const id = error.code ?? error.type
    return id !== null && id !== undefined && /^[A-Za-z0-9_.-]{1,64}$/.test(id) ? Option.some(id) : Option.none()
  }))

/**
 * Classifies an `AiError`. Details carry status, reason, path and the provider's error code. They
 * never carry headers, bodies or the cause, which may hold credentials.
 *
 * `MalformedOutput` is not retryable. A model that breaks the schema tends to break it again with
 * the same input, and the next trigger retries with more turns anyway.
 */
const classify = (error: AiError.AiError): Classified => {
  switch (error._tag) {
    case "HttpResponseError": {
      const status = error.response.status
      const code = errorCode(error.body)
      const detail = `HTTP ${status} (${error.reason}${
        code === undefined ? "" : `, ${code}`
      }) from ${error.request.method} ${pathOf(error.request.url)}`
      if (error.reason !== "StatusCode") return { reason: "Unknown", retryable: false, detail }
      if (status === 429) return { reason: "RateLimited", retryable: true, detail }
      if (status === 408) return { reason: "Timeout", retryable: true, detail }
      if (status >= 500) return { reason: "Unavailable", retryable: true, detail }
      return { reason: "Unknown", retryable: false, detail }
    }
    case "HttpRequestError": {
      const detail = `${error.reason} error on ${error.request.method} ${pathOf(error.request.url)}`
      return error.reason === "Transport"
        ? { reason: "Unavailable", retryable: true, detail }
        : { reason: "Unknown", retryable: false, detail }
    }
    case "MalformedOutput":
      return { reason: "MalformedOutput", retryable: false, detail: error.description ?? "the output is malformed" }
    case "MalformedInput":
      return { reason: "Unknown", retryable: false, detail: `malformed input: ${error.description ?? "refused"}` }
    case "UnknownError":
      return { reason: "Unknown", retryable: false, detail: error.description ?? "unknown model error" }
  }
}

/** Maps an `AiError` to the skill's error, once, at the edge of this layer. */
const toSkillError = (skillId: string) => (error: AiError.AiError): SkillExecutionError =>
  new SkillExecutionError({ skillId, ...classify(error) })

const tokens = (
  n: number | undefined
): number => (n === undefined || !Number.isFinite(n) ? 0 : Math.max(0, Math.round(n)))

const usageOf = (usage: Response.Usage) => ({
  inputTokens: tokens(usage.inputTokens),
  outputTokens: tokens(usage.outputTokens)
})

const confidenceOf = (confidence: number | null): number | undefined =>
  confidence === null || !Number.isFinite(confidence) ? undefined : Math.min(1, Math.max(0, confidence))

/**
 * Builds the skill over the `LanguageModel` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: LanguageModelSkill.Options
): Effect.Effect<SkillService.Service, never, LanguageModel.LanguageModel> =>
  Effect.gen(function*() {
    const model = yield* LanguageModel.LanguageModel
    const prefix = options.skillIdPrefix ?? "language-model"
    const instructions = options.summarizeInstructions ?? "built-in"
    const summarizeId = `${prefix}/summarize@${
      instructions === "built-in" ? summarizePromptVersion : instructions.hosted
    }`
    const extractId = `${prefix}/extract-facts@${extractFactsPromptVersion}`

    return SkillService.of({
      summarize: Effect.fn("LanguageModelSkill.summarize")(function*(input) {
        yield* Effect.annotateCurrentSpan({ conversationId: input.conversationId, skillId: summarizeId })
        const response = yield* model.generateText({
          prompt: Prompt.make(summarizeMessages(input, instructions === "built-in" ? "built-in" : "hosted"))
        }).pipe(Effect.mapError(toSkillError(summarizeId)))
        return {
          value: response.text.trim(),
          skillId: summarizeId,
          model: modelOf(options, response.content),
          usage: usageOf(response.usage)
        }
      }),

      extractFacts: Effect.fn("LanguageModelSkill.extractFacts")(function*(input) {
        yield* Effect.annotateCurrentSpan({ conversationId: input.conversationId, skillId: extractId })
        const response = yield* model.generateObject({
          objectName: "memory_update",
          schema: Extraction,
          prompt: Prompt.make(extractFactsMessages(input))
        }).pipe(Effect.mapError(toSkillError(extractId)))
        const facts = applyFactChanges(input.existingFacts, {
          upserts: response.value.facts.map((fact) => ({
            key: fact.key,
            value: fact.value,
            category: fact.category,
            confidence: confidenceOf(fact.confidence)
          })),
          remove: response.value.remove
        })
        const held = new Set(facts.map((fact) => fact.key))
        const removed = input.existingFacts.filter((fact) => !held.has(fact.key)).map((fact) => fact.key)
        return {
          value: { facts, narrative: response.value.narrative.trim(), removed },
          skillId: extractId,
          model: modelOf(options, response.content),
          usage: usageOf(response.usage)
        }
      })
    })
  })

/**
 * The skill as a layer over a `LanguageModel` layer of any provider.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: LanguageModelSkill.Options
): Layer.Layer<SkillService, never, LanguageModel.LanguageModel> => Layer.effect(SkillService, make(options))
