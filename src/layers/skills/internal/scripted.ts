/**
 * What the scripted skill answers when its script leaves a call out.
 */
import { type Reading, summaryParts } from "./prompts.js"

const lineBreak = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/

/**
 * The default summary: the existing summary's lines, then the first words of each new user
 * message. It keeps the newest lines within about `maxTokens`, at 3 characters a token (below
 * what any counter here counts). It is deterministic, and never blank when there is input.
 */
export const defaultSummary = (input: Reading & { readonly maxTokens: number }): string => {
  const points = input.turns.flatMap((turn) => turn.messages)
    .filter((message) => message.role === "user")
    .map((message) => (message.content.split(lineBreak)[0] ?? "").split(/\s+/).slice(0, 8).join(" "))
  const lines = [
    ...summaryParts(input.existingSummary).flatMap((part) => part.split(lineBreak)),
    ...points.map((point) => `- ${point}`)
  ]
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
