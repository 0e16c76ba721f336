/**
 * The questions files of `eval`: a transcript and the questions asked over it. Each question has
 * the turns its answer was said in, and its kind.
 */
import { FileSystem } from "@effect/platform"
import { Effect, Schema } from "effect"
import { dirname, resolve } from "node:path"
import { CliError, fileProblem, firstIssue } from "./Errors.js"

const Turn = Schema.Int.pipe(Schema.positive())

/**
 * The hard kinds of question:
 *
 * - `paraphrase`: asked in words the answer's turn does not use.
 * - `when`: the answer is a date, or the date of the session it was said in.
 * - `multi-turn`: the answers were said in two turns far apart, `statedAtTurn` and
 *   `lastStatedTurn`. In a transcript of several conversations, they may be in two.
 * - `profile`, across a user's conversations: what is known about the user. That is a name,
 *   contacts, addresses, preferences, standing goals, open orders.
 * - `corrected`, across a user's conversations: a value corrected or cancelled later. The answer
 *   is the current one.
 */
export const QuestionKind = Schema.Literal("paraphrase", "when", "multi-turn", "profile", "corrected")

/** A kind of question. */
export type QuestionKind = typeof QuestionKind.Type

/**
 * One question, asked after turn `askedAfterTurn`. Turn N is the N-th user message and what answers
 * it. A context or a model's reply holds the answer when it holds every string of `answers`.
 */
export const Question = Schema.Struct({
  id: Schema.String,
  factKey: Schema.NullOr(Schema.String),
  question: Schema.String,
  answers: Schema.NonEmptyArray(Schema.String.pipe(Schema.minLength(1))),
  statedAtTurn: Turn,
  lastStatedTurn: Turn,
  supersededAtTurn: Schema.NullOr(Turn),
  askedAfterTurn: Turn,
  kind: Schema.optional(QuestionKind),
  /**
   * The conversation it is asked in, in a transcript of several. A name the transcript does not use
   * is a new conversation of the same user, asked before its first message. Without it, the
   * question is asked in the conversation of turn `askedAfterTurn`.
   */
  conversation: Schema.optional(Schema.String.pipe(Schema.minLength(1)))
})

/** A questions file: the transcript (relative to the file) and its questions. */
export const QuestionsFile = Schema.Struct({
  transcript: Schema.String,
  description: Schema.optional(Schema.String),
  questions: Schema.Array(Question)
})

/** A question. */
export type Question = typeof Question.Type

/** Reads and checks a questions file. Its transcript path is resolved against the file's folder. */
export const readQuestions = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((error) => new CliError({ reason: `${path}: ${fileProblem(error)}` }))
    )
    const file = yield* Schema.decodeUnknown(Schema.parseJson(QuestionsFile), { errors: "first" })(text).pipe(
      Effect.mapError((error) => new CliError({ reason: `${path}: not a questions file: ${firstIssue(error)}` }))
    )
    return { ...file, transcript: resolve(dirname(path), file.transcript) }
  })

/** The ranks recall@k is counted at: the search's top 1, 3, 5 and 10 turns. */
export const recallKs = [1, 3, 5, 10] as const

/** The turns a question's answer was said in: `statedAtTurn` and `lastStatedTurn`, once each. */
export const answerTurns = (question: Question): ReadonlyArray<number> =>
  question.statedAtTurn === question.lastStatedTurn
    ? [question.statedAtTurn]
    : [question.statedAtTurn, question.lastStatedTurn]

/** The kind a report groups a question under. */
export const kindOf = (result: { readonly kind: QuestionKind | null }): string => result.kind ?? "plain"

/** The kinds of the questions asked, in `QuestionKind` order, `plain` last. None if no question has a kind. */
export const kindsOf = (results: ReadonlyArray<{ readonly kind: QuestionKind | null }>): ReadonlyArray<string> =>
  results.every((r) => r.kind === null)
    ? []
    : [...QuestionKind.literals, "plain"].filter((kind) => results.some((r) => kindOf(r) === kind))
