/**
 * What the language-model skills send, as a public module: the summarizer's input text rendered
 * from a skill call's data (`summaryInput`), our prompts and the messages built from them, so that
 * a skill of your own (any provider or client) can send exactly what `LanguageModelSkill` sends,
 * or start from it. The structured output of extract-facts is `LanguageModelSkill.Extraction`.
 *
 * @since 0.1.0
 */
import type { Prompt } from "@effect/ai"
import type { Turn } from "../../domain/Turn.js"
import type { SkillService } from "../../services/SkillService.js"
import * as internal from "./internal/prompts.js"

/**
 * The summarizer's input text of a skill call: the EXISTING_SUMMARY section (the
 * parts of `existingSummary`, a blank line between two, or NONE) and the NEW_TURNS section (each
 * turn headed `Turn n:`, one line per message, tool calls in brackets, a blank line between two
 * turns). Neither the summary nor a message can forge a marker, a turn header or a speaker: their
 * lines that would read as one are indented.
 *
 * @since 0.1.0
 * @category conversions
 */
export const summaryInput: (
  input: { readonly existingSummary: SkillService.ExistingSummary; readonly turns: ReadonlyArray<Turn> }
) => string = internal.summaryInput

/**
 * The messages of a summarize call, for `Prompt.make`: our system prompt (left out with
 * `"hosted"`, when the provider's request carries the instructions, e.g. an OpenAI hosted
 * prompt), the input text, and, when `input.overCap` is set, the answer that passed the cap and
 * `shortenSummaryPrompt`.
 *
 * @since 0.1.0
 * @category conversions
 */
export const summarizeMessages: (
  input: SkillService.SummarizeInput,
  instructions?: "built-in" | "hosted"
) => Array<Prompt.MessageEncoded> = internal.summarizeMessages

/**
 * The messages of an extract-facts call, for `Prompt.make`: our system prompt, then one user
 * message with the EXISTING_FACTS section and the input text. The section holds the known facts
 * the new turns name (a search term of a fact's key or value is one of theirs), not every known
 * fact: a skill applies the model's answer to all of them (`applyFactChanges`), so the facts the
 * model did not read are kept as they are.
 *
 * @since 0.1.0
 * @category conversions
 */
export const extractFactsMessages: (input: SkillService.ExtractFactsInput) => Array<Prompt.MessageEncoded> =
  internal.extractFactsMessages
