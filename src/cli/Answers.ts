/**
 * Whether a context holds a question's answer. That is the answer's strings in the context's text,
 * or for a `when` question, the dates on what the answer's turns said.
 */
import { digestText, factsText, recentLabel, summaryText, userFactsText } from "../domain/internal/contextText.js"
import { recalledText } from "../domain/internal/recall.js"
import { type MemoryContext } from "../domain/MemoryContext.js"
import { answerTurns, type Question } from "./Questions.js"
import type * as Transcript from "./Transcript.js"

/** The text a context puts in front of a model: what an answer must be found in. */
export const contextText = (context: MemoryContext): string =>
  [
    ...context.system.map((message) => message.content),
    ...(context.userFacts.length === 0 ? [] : [userFactsText(context.userFacts)]),
    ...(context.digest.length === 0 ? [] : [digestText(context.digest)]),
    ...(context.facts.length === 0 ? [] : [factsText(context.facts)]),
    ...(context.summary === null ? [] : [summaryText(context.summary)]),
    ...context.recent.map((message) =>
      [
        ...(context.dated && message.role === "user" ? [recentLabel(message)] : []),
        message.content,
        ...(message.metadata.toolCalls ?? []).map((call) => JSON.stringify(call.params))
      ].join(" ")
    ),
    ...(context.recalled.length === 0 ? [] : [recalledText(context.recalled, { dated: context.dated })])
  ].join("\n")

const isoDate = /\d{4}-\d{2}-\d{2}/g

/** The runs of four words of a text, lower-cased. A line sharing one says part of the text. */
const wordRuns = (text: string): Array<string> => {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu) ?? []
  return words.slice(3).map((_, i) => words.slice(i, i + 4).join(" "))
}

/**
 * Whether `text` dates what was said. Each date of `dates` needs a line that says four words in a
 * row of `said` under that date. The date is on the line itself (a recent message's label), or on
 * the nearest line above that names one (a summary's heading, a recalled turn's label). The date
 * alone is not enough: over many days, a date shown says when something happened, not that it
 * answers the question.
 */
export const datesSaid = (text: string, dates: ReadonlyArray<string>, said: ReadonlyArray<string>): boolean => {
  const runs = new Set(said.flatMap(wordRuns))
  const found = new Set<string>()
  let above: string | undefined
  for (const line of text.split("\n")) {
    const named = line.match(isoDate) ?? []
    const under = [...named, ...(above === undefined ? [] : [above])]
    if (under.some((date) => dates.includes(date)) && wordRuns(line).some((run) => runs.has(run))) {
      for (const date of under) found.add(date)
    }
    above = named.at(-1) ?? above
  }
  return dates.every((date) => found.has(date))
}

/**
 * Whether a context holds a question's answer. A `when` question answered by dates (`2025-01-05`)
 * needs those dates on what its answer's turns said (`datesSaid`). Any other needs its answer's
 * strings as written.
 */
export const answered = (
  text: string,
  question: Question,
  turns: ReadonlyArray<Transcript.ConversationTurn>
): boolean =>
  question.kind === "when" && question.answers.every((answer) => /^\d{4}-\d{2}-\d{2}$/.test(answer))
    ? datesSaid(
      text,
      question.answers,
      answerTurns(question).flatMap((turn) => (turns[turn - 1]?.messages ?? []).map((message) => message.content))
    )
    : holds(text, question.answers, false)

/** Whether `text` holds every answer string. A reply (`loose`) may differ in case and spacing. */
export const holds = (text: string, answers: ReadonlyArray<string>, loose: boolean): boolean => {
  const normalize = (s: string) => (loose ? s.toLowerCase().replace(/\s+/g, " ") : s)
  const haystack = normalize(text)
  return answers.every((answer) => haystack.includes(normalize(answer)))
}
