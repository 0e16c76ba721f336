/**
 * Plain-text rendering for the command line: contexts, messages, tables.
 */
import type { MemoryContext } from "../domain/MemoryContext.js"
import type { Message } from "../domain/Message.js"
import { toPromptMessages } from "../layers/ai/ContextPrompt.js"

const gutter = (label: string, text: string, width = 9): string => {
  const w = Math.max(width, label.length)
  return `${label.padEnd(w)}| ${text.replaceAll("\n", `\n${" ".repeat(w)}| `)}`
}

/** The context as the model gets it: one block per prompt message, in order. */
export const context = (value: MemoryContext): string =>
  toPromptMessages(value).map((message) => {
    const text = typeof message.content === "string"
      ? message.content
      : message.content.map((part) =>
        part.type === "text"
          ? part.text
          : part.type === "tool-call"
          ? `[tool call ${part.name} ${JSON.stringify(part.params)}]`
          : part.type === "tool-result"
          ? `[tool result ${JSON.stringify(part.result)}]`
          : `[${part.type}]`
      ).join(" ")
    return gutter(message.role, text)
  }).join("\n")

/** `n` and its noun: "1 turn", "2 turns". */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

/** What the context holds, in one line. */
export const contextLine = (value: MemoryContext): string =>
  [
    `${value.strategy}`,
    `${value.tokenCount} of ${value.tokenBudget ?? "unbounded"} tokens`,
    count(value.facts.length, "fact"),
    value.summary === null ? "no summary" : `a summary of messages up to #${value.summarizedUpTo}`,
    `${count(value.turnsShown, "turn")} shown`,
    `${value.turnsOmitted} left out`,
    ...(value.recalled.length === 0
      ? []
      : [`${count(value.recalled.length, "older turn")} recalled (${value.recalledTokens} tokens)`])
  ].join(", ")

/** A stored message, with its seq. */
export const message = (value: Message): string => {
  const calls = (value.metadata.toolCalls ?? []).map((call) =>
    ` [tool call ${call.name} ${JSON.stringify(call.params)}]`
  )
  return gutter(`#${value.seq} ${value.role}`, `${value.content}${calls.join("")}`, 16)
}

/** Labels and values in two aligned columns. */
export const table = (rows: ReadonlyArray<readonly [string, string | number]>): string => {
  const width = Math.max(0, ...rows.map(([label]) => label.length))
  return rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`).join("\n")
}

/** A ratio as `14.5x`. */
export const ratio = (value: number): string => `${value.toFixed(1)}x`

/** A duration in milliseconds, readable. */
export const duration = (millis: number): string =>
  millis < 1000 ? `${Math.round(millis)} ms` : `${(millis / 1000).toFixed(1)} s`
