/**
 * What the language-model skills send, as a public module: the summarizer's input text
 * (`SummaryInput`), our prompts and the messages built from them, so that a skill of your own (any
 * provider or client) can send exactly what `LanguageModelSkill` sends, or start from it. The
 * structured output of extract-facts is `LanguageModelSkill.Extraction`.
 *
 * @since 0.1.0
 */
import type { Prompt } from "@effect/ai"
import type { Fact } from "../../domain/Fact.js"
import * as SummaryInput from "../../domain/SummaryInput.js"
import type { Turn } from "../../domain/Turn.js"
import type { SkillService } from "../../services/SkillService.js"
import * as internal from "./internal/prompts.js"

/**
 * The summarizer's input: the EXISTING_SUMMARY and NEW_TURNS sections (DESIGN §3), one blank line
 * between two turns; what nothing inside can forge (see `SummaryInput.summaryInput`).
 *
 * @since 0.1.0
 * @category input
 */
export const summaryInput: (existing: string | null, turns: ReadonlyArray<Turn>) => string = SummaryInput.summaryInput

/**
 * Reads a summarizer input back: the existing summary (null for NONE), the NEW_TURNS text and its
 * turns (see `SummaryInput.parseSummaryInput`).
 *
 * @since 0.1.0
 * @category input
 */
export const parseSummaryInput: (text: string) => SummaryInput.ParsedInput = SummaryInput.parseSummaryInput

/**
 * The version of the input format (`SummaryInput.formatVersion`).
 *
 * @since 0.1.0
 * @category input
 */
export const inputFormatVersion: number = SummaryInput.formatVersion

/**
 * The version of our summarize prompt, as named in the skill ids (`openai/summarize@4`).
 *
 * @since 0.1.0
 * @category versions
 */
export const summarizePromptVersion: number = internal.summarizePromptVersion

/**
 * The version of our extract-facts prompt, as named in the skill ids (`openai/extract-facts@3`).
 *
 * @since 0.1.0
 * @category versions
 */
export const extractFactsPromptVersion: number = internal.extractFactsPromptVersion

/**
 * The system prompt of the summarize skill for a summary of at most `maxTokens` tokens: the
 * sections, what to keep (the user's goals, identifiers, amounts, dates, decisions, conditions)
 * and what to drop first when over length.
 *
 * @since 0.1.0
 * @category prompts
 */
export const summarizeSystemPrompt: (maxTokens: number) => string = internal.summarizeSystemPrompt

/**
 * The follow-up after a summary of `tokens` tokens came back over its cap of `maxTokens`: the
 * overrun stated, and what to cut first.
 *
 * @since 0.1.0
 * @category prompts
 */
export const shortenSummaryPrompt: (tokens: number, maxTokens: number) => string = internal.shortenSummaryPrompt

/**
 * The system prompt of the extract-facts skill, for a narrative of at most `maxTokens` tokens.
 *
 * @since 0.1.0
 * @category prompts
 */
export const extractFactsSystemPrompt: (maxTokens: number) => string = internal.extractFactsSystemPrompt

/**
 * The EXISTING_FACTS section of an extract-facts input: one JSON object per fact, or NONE.
 *
 * @since 0.1.0
 * @category input
 */
export const existingFactsSection: (facts: ReadonlyArray<Fact>) => string = internal.existingFactsSection

/**
 * The messages of a summarize call, for `Prompt.make`: our system prompt (left out with
 * `"hosted"`, when the provider's request carries the instructions, e.g. an OpenAI hosted
 * prompt), the input text, and, when `input.overCap` is set, the answer that passed the cap and
 * `shortenSummaryPrompt`.
 *
 * @since 0.1.0
 * @category messages
 */
export const summarizeMessages: (
  input: SkillService.SummarizeInput,
  instructions?: "built-in" | "hosted"
) => Array<Prompt.MessageEncoded> = internal.summarizeMessages

/**
 * The messages of an extract-facts call, for `Prompt.make`: our system prompt, then one user
 * message with the EXISTING_FACTS section and the input text.
 *
 * @since 0.1.0
 * @category messages
 */
export const extractFactsMessages: (input: SkillService.ExtractFactsInput) => Array<Prompt.MessageEncoded> =
  internal.extractFactsMessages
