/**
 * A scripted `SkillService` for tests: answers from functions you give (or deterministic
 * defaults), records every call, and reports usage as characters / 4.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Ref } from "effect"
import { parseSummaryInput } from "../../domain/SummaryInput.js"
import type { SkillExecutionError } from "../../errors/SkillExecutionError.js"
import { SkillService } from "../../services/SkillService.js"

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
 * @since 0.1.0
 */
export declare namespace ScriptedSkill {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Every call received so far, oldest first (failed calls included). */
    readonly calls: Effect.Effect<ReadonlyArray<Call>>
  }

  /**
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

/**
 * The default summary: the existing summary, then the first words of each user line of the new
 * turns, keeping the newest lines within about `maxTokens` (at 3 characters a token, below what
 * any counter here counts), as a model told the limit does. Deterministic, never blank when there
 * is input.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultSummary = (input: SkillService.SummarizeInput): string => {
  const { existing, newTurns } = parseSummaryInput(input.text)
  const points = newTurns.split("\n")
    .filter((line) => line.startsWith("User: "))
    .map((line) => line.slice("User: ".length).split(/\s+/).slice(0, 8).join(" "))
  const lines = [...(existing ?? "").split("\n"), ...points.map((point) => `- ${point}`)]
    .filter((line) => line.length > 0)
  const kept: Array<string> = []
  let length = 0
  for (const line of lines.reverse()) {
    length += line.length + 1
    if (kept.length > 0 && length > input.maxTokens * 3) break
    kept.unshift(line)
  }
  return kept.join("\n") || "(nothing to summarize)"
}

const usage = (input: string, output: string) => ({
  inputTokens: Math.ceil(input.length / 4),
  outputTokens: Math.ceil(output.length / 4)
})

/**
 * Builds the skill and its call log.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (script: ScriptedSkill.Script = {}) =>
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
          return { value, skillId: "scripted/summarize@1", model: null, usage: usage(input.text, value) }
        }),
      extractFacts: (input) =>
        Effect.gen(function*() {
          const n = yield* count({ skill: "extractFacts", input })
          const value = script.extractFacts === undefined
            ? { facts: input.existingFacts, narrative: defaultSummary(input) }
            : yield* script.extractFacts(input, n)
          return {
            value,
            skillId: "scripted/extract-facts@1",
            model: null,
            usage: usage(input.text, `${JSON.stringify(value.facts)}${value.narrative}`)
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
