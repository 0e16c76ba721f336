/**
 * A scripted `SkillService` for tests: answers from functions you give (or deterministic
 * defaults), records every call, and reports usage as characters / 4.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Ref } from "effect"
import type { SkillExecutionError } from "../../errors/SkillExecutionError.js"
import { SkillService } from "../../services/SkillService.js"
import { extractFactsReading, factsChanged, summaryInput } from "./internal/prompts.js"
import { defaultSummary } from "./internal/scripted.js"

/**
 * What a test can ask the scripted skill: the calls it received, in order.
 *
 * @since 0.1.0
 * @category tags
 */
export class ScriptedSkill extends Context.Tag("effect-chat-memory/ScriptedSkill")<
  ScriptedSkill,
  ScriptedSkill.Service
>() {}

/**
 * The options and types of `ScriptedSkill`.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace ScriptedSkill {
  /**
   * What a test reads back from the scripted skill.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Every call received so far, oldest first (failed calls included). */
    readonly calls: Effect.Effect<ReadonlyArray<Call>>
  }

  /**
   * A call the scripted skill received: which skill, with what input.
   *
   * @since 0.1.0
   * @category models
   */
  export type Call =
    | { readonly skill: "summarize"; readonly input: SkillService.SummarizeInput }
    | { readonly skill: "extractFacts"; readonly input: SkillService.ExtractFactsInput }

  /**
   * The answers: each function gets the input and the call's number (1 for the first call of
   * that skill).
   *
   * @since 0.1.0
   * @category models
   */
  export interface Script {
    readonly summarize?: (
      input: SkillService.SummarizeInput,
      call: number
    ) => Effect.Effect<string, SkillExecutionError>
    readonly extractFacts?: (
      input: SkillService.ExtractFactsInput,
      call: number
    ) => Effect.Effect<SkillService.FactsAndNarrative, SkillExecutionError>
  }
}

// Every line break a text may hold.

/** Usage as characters / 4, of the texts a model skill would read and of the answer. */
const usage = (read: ReadonlyArray<string>, output: string) => ({
  inputTokens: Math.ceil(read.join("").length / 4),
  outputTokens: Math.ceil(output.length / 4)
})

/** Builds the skill and its call log. */
const make = (script: ScriptedSkill.Script = {}) =>
  Effect.gen(function*() {
    const log = yield* Ref.make<ReadonlyArray<ScriptedSkill.Call>>([])
    const count = (call: ScriptedSkill.Call) =>
      Ref.modify(log, (calls) => {
        const next = [...calls, call]
        return [next.filter((c) => c.skill === call.skill).length, next] as const
      })
    const skill = SkillService.of({
      summarize: (input) =>
        Effect.gen(function*() {
          const n = yield* count({ skill: "summarize", input })
          const value = script.summarize === undefined ? defaultSummary(input) : yield* script.summarize(input, n)
          return { value, skillId: "scripted/summarize@1", model: null, usage: usage([summaryInput(input)], value) }
        }),
      extractFacts: (input) =>
        Effect.gen(function*() {
          const n = yield* count({ skill: "extractFacts", input })
          const value = script.extractFacts === undefined
            ? { facts: input.existingFacts, narrative: input.maxTokens === 0 ? "" : defaultSummary(input) }
            : yield* script.extractFacts(input, n)
          return {
            value,
            skillId: "scripted/extract-facts@1",
            model: null,
            usage: usage(
              extractFactsReading(input),
              `${JSON.stringify(factsChanged(input.existingFacts, value.facts))}${value.narrative}`
            )
          }
        })
    })
    return { skill, inspect: ScriptedSkill.of({ calls: Ref.get(log) }) }
  })

/**
 * The scripted skill as a layer providing `SkillService` and `ScriptedSkill` (its call log).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (script: ScriptedSkill.Script = {}): Layer.Layer<SkillService | ScriptedSkill> =>
  Layer.effectContext(
    Effect.map(
      make(script),
      ({ inspect, skill }) => Context.make(SkillService, skill).pipe(Context.add(ScriptedSkill, inspect))
    )
  )
