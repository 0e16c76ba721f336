/**
 * The port to the model "skills" the memory needs: fold turns into a narrative summary, and
 * extract facts plus a narrative as structured output. The input is data: the summary so far, the
 * known facts, the turns as stored. Each skill renders what it reads.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import {
 *   ApproximateTokenCounter,
 *   ChatMemory,
 *   MemoryStore,
 *   SkillExecutionError,
 *   SkillService,
 *   SummarizationStrategy
 * } from "effect-chat-memory"
 *
 * const earlier = (existing: SkillService.SkillService.ExistingSummary): Array<string> =>
 *   existing._tag === "None" ? [] : existing._tag === "Layers" ? [existing.older, existing.newer] : [existing.text]
 *
 * // A summarizer of your own, here with no model: the summary so far, then each new turn's first line.
 * const FirstLines = Layer.succeed(SkillService.SkillService, {
 *   summarize: (input) =>
 *     Effect.succeed({
 *       value: [...earlier(input.existingSummary), ...input.turns.map((turn) => turn.messages[0]?.content ?? "")]
 *         .join("\n"),
 *       skillId: "first-lines/summarize@1",
 *       model: null,
 *       usage: { inputTokens: 0, outputTokens: 0 }
 *     }),
 *   // Only the hierarchical strategy extracts facts.
 *   extractFacts: () =>
 *     Effect.fail(
 *       new SkillExecutionError.SkillExecutionError({
 *         skillId: "first-lines/extract-facts@1",
 *         reason: "Unavailable",
 *         retryable: false
 *       })
 *     )
 * })
 *
 * const MemoryLive = ChatMemory.layer.pipe(
 *   Layer.provideMerge(SummarizationStrategy.layer({ tokenBudget: 600, summaryTokenCap: 100 })),
 *   Layer.provideMerge(FirstLines),
 *   Layer.provideMerge(MemoryStore.layer),
 *   Layer.provideMerge(ApproximateTokenCounter.layer)
 * )
 *
 * const program = Effect.gen(function*() {
 *   const memory = yield* ChatMemory.ChatMemoryService
 *   for (let i = 1; i <= 12; i++) {
 *     yield* memory.addMessages("c1", [
 *       { role: "user", content: `Where is order A-${1000 + i}? `.repeat(4) },
 *       { role: "assistant", content: `Order A-${1000 + i} ships on day ${i}. `.repeat(4) }
 *     ])
 *   }
 *   yield* memory.awaitIdle("c1")
 *   return yield* memory.getContext("c1")
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(MemoryLive))).then((context) =>
 *   assert.ok(context.summary?.startsWith("Where is order A-1001?"))
 * )
 * ```
 *
 * @since 0.1.0
 */
import type { Data, Effect } from "effect"
import { Context } from "effect"
import type { ConversationId } from "../domain/ConversationId.js"
import type { Fact } from "../domain/Fact.js"
import type { Turn } from "../domain/Turn.js"
import type { SkillExecutionError } from "../errors/SkillExecutionError.js"

/**
 * Runs model skills. Implementations: a `LanguageModel` of `@effect/ai`, an offline extractive
 * skill with no model, and scripted skills for tests.
 *
 * Laws:
 * - A skill never fails with anything but `SkillExecutionError`, and reports what it cost
 *   (`usage`) and who answered (`skillId`, `model`).
 * - A skill does not write to the store: the strategy decides what to commit.
 *
 * @since 0.1.0
 * @category tags
 */
export class SkillService extends Context.Tag("effect-chat-memory/SkillService")<
  SkillService,
  SkillService.Service
>() {}

/**
 * The shape of the service (`Service`) and the types it takes and gives.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace SkillService {
  /**
   * The skills; their laws are on the tag.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Fold new turns into the running narrative. */
    readonly summarize: (input: SummarizeInput) => Effect.Effect<SkillOutput<string>, SkillExecutionError>
    /** Extract facts and a narrative. Existing facts are passed in to be merged, updated or removed. */
    readonly extractFacts: (
      input: ExtractFactsInput
    ) => Effect.Effect<SkillOutput<FactsAndNarrative>, SkillExecutionError>
  }

  /**
   * The input of `summarize`.
   *
   * @since 0.1.0
   * @category models
   */
  export interface SummarizeInput {
    readonly conversationId: ConversationId
    /** The summary the fold starts from: none, the running narrative, or two layers to merge. */
    readonly existingSummary: ExistingSummary<"None" | "Narrative" | "Layers">
    /**
     * The turns to fold in, oldest first, as stored: each message with its role, content and
     * metadata.
     */
    readonly turns: ReadonlyArray<Turn>
    /** The summary the output should not exceed, in tokens. */
    readonly maxTokens: number
    /**
     * Set when the skill is asked again because its answer to this input passed `maxTokens`. It
     * holds that answer and its size, so the skill can shorten it, keeping the newest content.
     */
    readonly overCap?: OverCap | undefined
  }

  /**
   * The summary a skill call starts from, by the fold that asks:
   *
   * - `None`: there is none yet, or the fold rereads the original messages (the `full` modes).
   * - `Narrative`: the running narrative the turns fold into (`incremental`, the facts modes).
   * - `Latest`: the narrative's latest lines, for the hierarchical strategy's `append` fold. The
   *   narrative answered replaces those lines, after the earlier ones.
   * - `Layers`: the two oldest layers, to merge into one, with no turns (`layered`).
   *
   * A call names the cases it can take: `ExistingSummary<"None" | "Narrative">`.
   *
   * @example
   * ```ts
   * import { SkillService } from "effect-chat-memory"
   *
   * const text = (existing: SkillService.SkillService.ExistingSummary): string => {
   *   switch (existing._tag) {
   *     case "None":
   *       return ""
   *     case "Narrative":
   *     case "Latest":
   *       return existing.text
   *     case "Layers":
   *       return `${existing.older}\n\n${existing.newer}`
   *   }
   * }
   * ```
   *
   * @since 0.2.0
   * @category models
   */
  export type ExistingSummary<Tag extends ExistingSummary.Tag = ExistingSummary.Tag> = Data.TaggedEnum.Value<
    ExistingSummary.Cases,
    Tag
  >

  /**
   * The cases of `ExistingSummary` and their tags.
   *
   * @since 0.2.0
   * @category models
   */
  export namespace ExistingSummary {
    /**
     * The cases, one per fold.
     *
     * @since 0.2.0
     * @category models
     */
    export type Cases = Data.TaggedEnum<{
      None: {}
      Narrative: { readonly text: string }
      Latest: { readonly text: string }
      Layers: { readonly older: string; readonly newer: string }
    }>

    /**
     * The tag of a case.
     *
     * @since 0.2.0
     * @category models
     */
    export type Tag = Cases["_tag"]
  }

  /**
   * A summary that came back over its cap.
   *
   * @since 0.1.0
   * @category models
   */
  export interface OverCap {
    readonly summary: string
    /** Its size, in tokens, as the memory's `TokenCounter` counts them. */
    readonly tokens: number
  }

  /**
   * The input of `extractFacts`.
   *
   * @since 0.1.0
   * @category models
   */
  export interface ExtractFactsInput extends Omit<SummarizeInput, "overCap" | "existingSummary"> {
    /** The narrative the extraction starts from: none, the running narrative, or its latest lines. */
    readonly existingSummary: ExistingSummary<"None" | "Narrative" | "Latest">
    /**
     * The narrative the output should not exceed, in tokens. At 0 the narrative is empty, and the
     * facts keep within `maxFactTokens`: the facts alone.
     */
    readonly maxTokens: number
    /** The facts known so far, to be kept, updated or removed. */
    readonly existingFacts: ReadonlyArray<Fact>
    /** The most tokens the facts may take, when it differs from the narrative's `maxTokens`. */
    readonly maxFactTokens?: number | undefined
    /**
     * The most tokens the facts and the narrative may take together. Facts count as their block is
     * shown (`TokenCounter.countMessage` of the facts message), the narrative as its text. When
     * set, the narrative may use what the facts leave, beyond `maxTokens`. A skill may keep fewer
     * facts where the narrative carries more per token. The facts still keep within
     * `maxFactTokens`. A skill may ignore it and keep the narrative within `maxTokens`.
     */
    readonly maxSharedTokens?: number | undefined
  }

  /**
   * What `extractFacts` answers.
   *
   * @since 0.1.0
   * @category models
   */
  export interface FactsAndNarrative {
    readonly facts: ReadonlyArray<Fact>
    readonly narrative: string
    /**
     * The keys of `existingFacts` that the new turns make false or obsolete (a value cancelled or
     * corrected). What is known about a user loses these, and only these: a known fact left out of
     * `facts` for room stays known. Left out, nothing is removed.
     */
    readonly removed?: ReadonlyArray<string> | undefined
  }

  /**
   * A skill's answer, with who answered and what it cost.
   *
   * @since 0.1.0
   * @category models
   */
  export interface SkillOutput<A> {
    readonly value: A
    /** Which skill answered, with its prompt version, e.g. `openai/summarize@1`. */
    readonly skillId: string
    /** The model that answered, or null for skills without one. */
    readonly model: string | null
    readonly usage: { readonly inputTokens: number; readonly outputTokens: number }
  }
}
