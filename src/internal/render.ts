/**
 * The text the memory adds to a prompt besides stored messages: the facts block and the summary.
 * Token counting and prompt conversion both use these, so what is counted is what is sent.
 */
import type { Fact } from "../domain/Fact.js"

/** The system message that carries the facts, one `- key: value` line each. */
export const factsText = (facts: ReadonlyArray<Fact>): string =>
  `Known facts about this conversation:\n${facts.map((fact) => `- ${fact.key}: ${fact.value}`).join("\n")}`

/** The system message that carries the running summary of the older conversation. */
export const summaryText = (narrative: string): string => `Summary of the earlier conversation:\n${narrative}`
