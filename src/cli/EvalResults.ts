/**
 * The figures of `eval`: each question's outcome, recall@k and each strategy's figures. The table
 * prints them one column per strategy.
 */
import type { StrategyName } from "../domain/ConversationSettings.js"
import { kindsOf, type QuestionKind, recallKs } from "./Questions.js"

/** The outcome of one question for one strategy. */
export interface QuestionResult {
  readonly id: string
  readonly kind: QuestionKind | null
  readonly askedAfterTurn: number
  readonly age: number
  readonly inContext: boolean
  readonly contextTokens: number
  /**
   * The rank, from 1, of each answer turn (`answerTurns`) among the turns the recall search
   * returned. It is at most the largest of `recallKs`, or null for a turn not returned. The whole
   * field is null when no search was run, with recall off.
   */
  readonly answerRanks: ReadonlyArray<number | null> | null
  /** Whether the model's reply held the answer. Null when no model was asked. */
  readonly modelCorrect: boolean | null
  /** For a question in a new conversation of the user: whether the memory without the user held it. */
  readonly noUser: boolean | null
  /**
   * With recall: whether a BM25 index over every turn so far, across the user's conversations,
   * held it in the same budget. Null otherwise.
   */
  readonly bm25: boolean | null
}

/** Recall@k of a group of questions: how often the search ranks an answer turn in its top k. */
export interface RecallAtK {
  /** The questions counted: `all`, or one kind (`plain` for questions without one). */
  readonly questions: string
  readonly asked: number
  /**
   * Per k of `recallKs`: the questions with an answer turn among the top k turns (`hits`). Also
   * those with every answer turn there (`allTurns`), which differs for multi-turn questions.
   */
  readonly atK: ReadonlyArray<{ readonly k: number; readonly hits: number; readonly allTurns: number }>
}

/** The figures of one strategy. */
export interface StrategyResult {
  readonly strategy: StrategyName
  /** Whether each question's context was asked with the question as its query (recall). */
  readonly recall: boolean
  /** The strategy, and `+ recall` when recall was on. */
  readonly label: string
  readonly questions: ReadonlyArray<QuestionResult>
  readonly inContext: number
  readonly byAge: ReadonlyArray<{ readonly age: string; readonly inContext: number; readonly asked: number }>
  /** Answers in context by kind of question, `plain` for none. Empty when no question has a kind. */
  readonly byKind: ReadonlyArray<{ readonly kind: string; readonly inContext: number; readonly asked: number }>
  /** Recall@k of all the questions, then of each kind. Null when no search was run. */
  readonly recallAtK: ReadonlyArray<RecallAtK> | null
  readonly modelCorrect: number | null
  /** Of the questions asked in a new conversation, the answers the memory without the user held. */
  readonly noUser: number | null
  /** Of the questions asked with recall, the answers a BM25 index over the turns so far held. */
  readonly bm25: number | null
  readonly contextTokensMedian: number
  readonly contextTokensMax: number
  readonly summarizations: number
  readonly summarizerInputTokens: number
  readonly summarizerOutputTokens: number
  readonly tokensStored: number
  /** Turns after which the context omitted turns, and the most omitted at once. */
  readonly turnsWithOmissions: number
  readonly maxTurnsOmitted: number
}

const percent = (part: number, whole: number): string =>
  whole === 0 ? "-" : `${part}/${whole} (${Math.round((part / whole) * 100)} %)`

/** `hits` at each k out of `asked`, e.g. `20/35/40/45 of 63 (32/56/63/71 %)`. */
const atKCell = (hits: ReadonlyArray<number>, asked: number): string =>
  asked === 0
    ? "-"
    : `${hits.join("/")} of ${asked} (${hits.map((n) => Math.round((n / asked) * 100)).join("/")} %)`

/** The rows of recall@k: all questions, then each kind. Multi-turn questions also with both turns found. */
const recallRows = (results: ReadonlyArray<StrategyResult>): Array<readonly [string, ...Array<string>]> => {
  if (results.every((r) => r.recallAtK === null)) return []
  const groups = [...new Set(results.flatMap((r) => (r.recallAtK ?? []).map((g) => g.questions)))]
  const cell = (r: StrategyResult, group: string, field: "hits" | "allTurns") => {
    const found = r.recallAtK?.find((g) => g.questions === group)
    return found === undefined ? "-" : atKCell(found.atK.map((at) => at[field]), found.asked)
  }
  return groups.flatMap((group): Array<readonly [string, ...Array<string>]> => [
    [
      group === "all" ? `search recall@${recallKs.join("/")}` : `  of ${group} questions`,
      ...results.map((r) => cell(r, group, "hits"))
    ],
    ...(group === "multi-turn"
      ? [["  of multi-turn, both turns", ...results.map((r) => cell(r, group, "allTurns"))] as const]
      : [])
  ])
}

/** The table of the results, one column per strategy. */
export const table = (results: ReadonlyArray<StrategyResult>, asked: number): string => {
  const ages = [...new Set(results.flatMap((r) => r.byAge.map((b) => b.age)))]
    .sort((a, b) => Number.parseInt(a.replace(/\D*/, ""), 10) - Number.parseInt(b.replace(/\D*/, ""), 10))
  const rows: Array<readonly [string, ...Array<string>]> = [
    ["", ...results.map((r) => r.label)],
    ["answer in context", ...results.map((r) => percent(r.inContext, asked))],
    ...ages.map((age): readonly [string, ...Array<string>] => [
      `  asked ${age} turns later`,
      ...results.map((r) => {
        const bucket = r.byAge.find((b) => b.age === age)
        return bucket === undefined ? "-" : percent(bucket.inContext, bucket.asked)
      })
    ]),
    ...kindsOf(results.flatMap((r) => r.questions)).map((kind): readonly [string, ...Array<string>] => [
      `  ${kind} questions`,
      ...results.map((r) => {
        const group = r.byKind.find((b) => b.kind === kind)
        return group === undefined ? "-" : percent(group.inContext, group.asked)
      })
    ]),
    ...(results.some((r) => r.noUser !== null)
      ? [
        [
          "  the same memory, no user",
          ...results.map((r) => r.noUser === null ? "-" : percent(r.noUser, asked))
        ] as const
      ]
      : []),
    ...(results.some((r) => r.bm25 !== null)
      ? [
        ["  BM25 over the turns so far", ...results.map((r) => r.bm25 === null ? "-" : percent(r.bm25, asked))] as const
      ]
      : []),
    ...recallRows(results),
    ...(results.some((r) => r.modelCorrect !== null)
      ? [["model answered right", ...results.map((r) => percent(r.modelCorrect ?? 0, asked))] as const]
      : []),
    ["context tokens", ...results.map((r) => `${r.contextTokensMedian} median, ${r.contextTokensMax} max`)],
    ["summarizer calls", ...results.map((r) => String(r.summarizations))],
    [
      "summarizer tokens",
      ...results.map((r) =>
        `${r.summarizerInputTokens} read (${
          (r.summarizerInputTokens / Math.max(1, r.tokensStored)).toFixed(2)
        }x stored), ${r.summarizerOutputTokens} written`
      )
    ],
    [
      "turns left out",
      ...results.map((r) => `at ${r.turnsWithOmissions} turns (at most ${r.maxTurnsOmitted} at once)`)
    ]
  ]
  const columns = results.length + 1
  const widths = Array.from({ length: columns }, (_, col) => Math.max(...rows.map((row) => (row[col] ?? "").length)))
  return rows.map((row) => row.map((cell, col) => cell.padEnd(widths[col] ?? 0)).join("  ").trimEnd()).join("\n")
}
