/**
 * What the language-model skills send: the input text of a skill call (`summaryInput`), and the
 * messages built from our prompts. A skill of your own, for any provider or client, can send
 * exactly what `LanguageModelSkill` sends, or start from it. The structured output of
 * extract-facts is `LanguageModelSkill.Extraction`.
 *
 * @since 0.1.0
 */
import type { Prompt } from "@effect/ai"
import type { Turn } from "../../domain/Turn.js"
import type { SkillService } from "../../services/SkillService.js"
import * as internal from "./internal/prompts.js"

/**
 * The input text of a skill call, in two sections. EXISTING_SUMMARY holds the parts of
 * `existingSummary`, a blank line between two, or NONE. NEW_TURNS holds each turn headed
 * `Turn n:`, one line per message, tool calls in brackets, a blank line between turns. A summary
 * or message line that would read as a marker, a turn header or a speaker is indented.
 *
 * @since 0.1.0
 * @category conversions
 */
export const summaryInput: (
  input: { readonly existingSummary: SkillService.ExistingSummary; readonly turns: ReadonlyArray<Turn> }
) => string = internal.summaryInput

/**
 * The messages of a summarize call, for `Prompt.make`: our system prompt, then the input text.
 * With `"hosted"`, the system prompt is left out, as the provider's request carries the
 * instructions (an OpenAI hosted prompt). When `input.overCap` is set, the answer that passed
 * the cap and `shortenSummaryPrompt` follow.
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
 * message with the EXISTING_FACTS section and the input text. The section holds only the known
 * facts the new turns name. A skill applies the model's answer to all of them, so the facts the
 * model did not read stay as they are, and answers the keys the model removed as `removed`.
 *
 * @since 0.1.0
 * @category conversions
 */
export const extractFactsMessages: (input: SkillService.ExtractFactsInput) => Array<Prompt.MessageEncoded> =
  internal.extractFactsMessages
