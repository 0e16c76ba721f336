/**
 * `eval`: how much of what matters a memory keeps. It replays a transcript turn by turn for each
 * strategy asked for. At each question's turn, it checks whether the context holds the answer's
 * literal strings. Optionally, it asks a model the question over that context and grades the reply
 * the same way. With recall, it also searches the conversation with each question and ranks the
 * turns that state its answer (recall@k).
 *
 * It reports answers kept overall, by the fact's age and by kind of question, recall@k, context
 * tokens, summarizer calls and tokens, and omitted turns.
 */
import * as OpenAiClient from "@effect/ai-openai/OpenAiClient"
import * as OpenAiLanguageModel from "@effect/ai-openai/OpenAiLanguageModel"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Console, Effect, Layer, Option } from "effect"
import { relative } from "node:path"
import { fileURLToPath } from "node:url"
import { StrategyName } from "../domain/ConversationSettings.js"
import { type MemoryContext } from "../domain/MemoryContext.js"
import { withUserMessage } from "../layers/ai/ContextPrompt.js"
import type * as ChatMemoryConfig from "../layers/ChatMemoryConfig.js"
import * as ChatMemoryLive from "../layers/ChatMemoryLive.js"
import { ChatMemoryService } from "../services/ChatMemoryService.js"
import { UserMemoryService } from "../services/UserMemoryService.js"
import { answered, contextText, holds } from "./Answers.js"
import * as Bm25 from "./Bm25.js"
import { CliError } from "./Errors.js"
import { type QuestionResult, type RecallAtK, type StrategyResult, table } from "./EvalResults.js"
import * as Progress from "./Progress.js"
import { answerTurns, kindOf, kindsOf, type Question, readQuestions, recallKs } from "./Questions.js"
import * as Report from "./Report.js"
import * as Settings from "./Settings.js"
import * as Transcript from "./Transcript.js"

export { contextText, datesSaid } from "./Answers.js"
export type { QuestionResult, RecallAtK, StrategyResult } from "./EvalResults.js"
export { table } from "./EvalResults.js"
export { answerTurns, Question, QuestionKind, QuestionsFile, readQuestions, recallKs } from "./Questions.js"

/** The questions of the bundled conversation. */
export const defaultQuestions = fileURLToPath(new URL("../../examples/conversation.questions.json", import.meta.url))

/** The age groups of the report: turns since a fact was last stated, when it is asked. */
export const ageBuckets = [[60, 99], [100, 149], [150, Number.POSITIVE_INFINITY]] as const

const bucketOf = (age: number): string => {
  const bucket = ageBuckets.find(([from, to]) => age >= from && age <= to)
  return bucket === undefined ? `< ${ageBuckets[0][0]}` : bucket[1] === Number.POSITIVE_INFINITY
    ? `${bucket[0]}+`
    : `${bucket[0]}-${bucket[1]}`
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length === 0 ? 0 : sorted.length % 2 === 1
    ? sorted[mid] ?? 0
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

/** Recall@k of `results` (each searched), under the name `questions`. */
const recallAtK = (questions: string, results: ReadonlyArray<QuestionResult>): RecallAtK => ({
  questions,
  asked: results.length,
  atK: recallKs.map((k) => {
    const within = (rank: number | null) => rank !== null && rank <= k
    return {
      k,
      hits: results.filter((r) => (r.answerRanks ?? []).some(within)).length,
      allTurns: results.filter((r) => r.answerRanks !== null && r.answerRanks.every(within)).length
    }
  })
})

/** Asks a model `question` over `context`; its reply's text. */
export type Ask = (context: MemoryContext, question: string) => Effect.Effect<string, unknown>

/** Asks the `LanguageModel` in context, telling it to quote ids, amounts and dates as stated. */
export const askLanguageModel: Effect.Effect<Ask, never, LanguageModel.LanguageModel> = Effect.map(
  LanguageModel.LanguageModel,
  (model): Ask => (context, question) =>
    Effect.map(
      model.generateText({
        prompt: withUserMessage(
          context,
          `${question}\nAnswer in one short sentence from what this conversation says; quote identifiers, amounts ` +
            "and dates exactly as they were written."
        )
      }),
      (response) => response.text
    )
)

/** The text of a turn as a BM25 index holds it: its messages and the params of its tool calls. */
const turnText = (turn: Transcript.ConversationTurn): string =>
  turn.messages.map((message) =>
    [message.content, ...(message.metadata?.toolCalls ?? []).map((call) => JSON.stringify(call.params))].join(" ")
  ).join("\n")

/** The user of an `eval` over a transcript of several conversations, unless `--user` names one. */
export const defaultUser = "eval-user"

/** The ids a run stores under: `eval-<strategy>[-recall]`, plus `-<name>` per conversation. */
const runIds = (strategy: StrategyName, recall: boolean) => {
  const base = `eval-${strategy}${recall ? "-recall" : ""}`
  return {
    conversation: (name: string | null | undefined) => name === null || name === undefined ? base : `${base}-${name}`,
    /** Each run has its own user, so runs on one store never share facts about a user. */
    user: (user: string) => `${base}-${user}`
  }
}

/**
 * Replays `turns` through the memory in context and checks each question at its turn. `ask`, when
 * given, also asks a model. A transcript of several conversations is replayed as those of one
 * user (`user`). A question in a conversation the transcript does not hold is asked in a new
 * conversation of that user. It is also checked against the same memory without the user. With
 * recall, each question is also checked against a BM25 index over every turn so far.
 */
export const evaluate = (
  strategy: StrategyName,
  turns: ReadonlyArray<Transcript.ConversationTurn>,
  questions: ReadonlyArray<Question>,
  ask: Option.Option<Ask>,
  recall = false,
  user?: string | undefined
) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const label = recall ? `${strategy} + recall` : strategy
    const ids = runIds(strategy, recall)
    const several = turns.some((turn) => turn.conversation !== null)
    const idOf = ids.conversation
    const userOf = several || user !== undefined ? { userId: ids.user(user ?? defaultUser) } : {}
    const names = new Set(turns.map((turn) => turn.conversation))
    const bm25 = Bm25.make()
    const byTurn = new Map<number, Array<Question>>()
    for (const question of questions) {
      byTurn.set(question.askedAfterTurn, [...(byTurn.get(question.askedAfterTurn) ?? []), question])
    }
    const progress = yield* Progress.make(`eval ${label}`, turns.length, "turns")
    const results: Array<QuestionResult> = []
    const contextTokens: Array<number> = []
    // The last seq of each turn added, and its conversation. A turn found maps to the transcript
    // turn of its conversation that holds its last message.
    const lastSeqs: Array<number> = []
    const conversationOfTurn: Array<string> = []
    const turnOf = (conversationId: string, seq: number): number =>
      lastSeqs.findIndex((last, i) => conversationOfTurn[i] === conversationId && seq <= last) + 1
    let turnsWithOmissions = 0
    let maxTurnsOmitted = 0
    for (const [i, turn] of turns.entries()) {
      const conversationId = idOf(turn.conversation)
      const stored = yield* memory.addMessages(conversationId, turn.messages.map(Transcript.toInput), userOf)
      lastSeqs.push(stored.at(-1)?.seq ?? lastSeqs.at(-1) ?? 0)
      conversationOfTurn.push(conversationId)
      bm25.add(turnText(turn))
      yield* memory.awaitIdle(conversationId)
      const context = yield* memory.getContext(conversationId)
      contextTokens.push(context.tokenCount)
      if (context.turnsOmitted > 0) turnsWithOmissions += 1
      maxTurnsOmitted = Math.max(maxTurnsOmitted, context.turnsOmitted)
      for (const question of byTurn.get(i + 1) ?? []) {
        // A question asked in a conversation the transcript does not hold: a new one of the user.
        const fresh = question.conversation !== undefined && !names.has(question.conversation)
        const where = question.conversation === undefined ? conversationId : idOf(question.conversation)
        // With recall, the question is the query of its own context, as an agent asks it.
        const asked = recall || fresh
          ? yield* memory.getContext(where, { ...userOf, ...(recall ? { query: question.question } : {}) })
          : context
        if (recall || fresh) contextTokens.push(asked.tokenCount)
        // Recall@k: the strategy's recall search over everything so far, the user's conversations
        // included, with the question as its query.
        const found = recall
          ? yield* memory.searchMemory(where, question.question, { limit: Math.max(...recallKs), ...userOf })
          : null
        const ranked = found?.map((turn) => turnOf(turn.conversationId ?? where, turn.toSeq)) ?? []
        const reply = Option.isSome(ask) ? yield* ask.value(asked, question.question) : null
        results.push({
          id: question.id,
          kind: question.kind ?? null,
          askedAfterTurn: question.askedAfterTurn,
          age: question.askedAfterTurn - question.lastStatedTurn,
          inContext: answered(contextText(asked), question, turns),
          contextTokens: asked.tokenCount,
          answerRanks: found === null ? null : answerTurns(question).map((turn) => {
            const rank = ranked.indexOf(turn)
            return rank === -1 ? null : rank + 1
          }),
          modelCorrect: reply === null ? null : holds(reply, question.answers, true),
          noUser: fresh
            ? answered(
              contextText(yield* memory.getContext(where, recall ? { query: question.question } : {})),
              question,
              turns
            )
            : null,
          bm25: recall
            ? answered(bm25.context(question.question, asked.tokenBudget ?? 3000), question, turns)
            : null
        })
      }
      yield* progress.tick(i + 1)
    }
    yield* progress.finish
    // Every conversation of the transcript, since a user's summaries are made in each.
    const each = yield* Effect.forEach([...names], (name) => memory.stats(idOf(name)))
    const total = (field: "summarizations" | "summarizerInputTokens" | "summarizerOutputTokens" | "tokensStored") =>
      each.reduce((sum, stats) => sum + stats[field], 0)
    const ages = [...new Set(results.map((r) => bucketOf(r.age)))]
    return {
      strategy,
      recall,
      label,
      questions: results,
      inContext: results.filter((r) => r.inContext).length,
      byAge: ages.map((age) => {
        const asked = results.filter((r) => bucketOf(r.age) === age)
        return { age, asked: asked.length, inContext: asked.filter((r) => r.inContext).length }
      }),
      byKind: kindsOf(results).map((kind) => {
        const asked = results.filter((r) => kindOf(r) === kind)
        return { kind, asked: asked.length, inContext: asked.filter((r) => r.inContext).length }
      }),
      recallAtK: recall
        ? [
          recallAtK("all", results),
          ...kindsOf(results).map((kind) => recallAtK(kind, results.filter((r) => kindOf(r) === kind)))
        ]
        : null,
      modelCorrect: Option.isSome(ask) ? results.filter((r) => r.modelCorrect === true).length : null,
      noUser: results.some((r) => r.noUser !== null) ? results.filter((r) => r.noUser === true).length : null,
      bm25: results.some((r) => r.bm25 !== null) ? results.filter((r) => r.bm25 === true).length : null,
      contextTokensMedian: median(contextTokens),
      contextTokensMax: Math.max(0, ...contextTokens),
      summarizations: total("summarizations"),
      summarizerInputTokens: total("summarizerInputTokens"),
      summarizerOutputTokens: total("summarizerOutputTokens"),
      tokensStored: total("tokensStored"),
      turnsWithOmissions,
      maxTurnsOmitted
    } satisfies StrategyResult
  })

const parseStrategies = (text: string) =>
  Effect.forEach(text.split(",").map((s) => s.trim()).filter((s) => s.length > 0), (name) => {
    const strategy = StrategyName.literals.find((s) => s === name)
    return strategy === undefined
      ? Effect.fail(
        new CliError({
          reason: `unknown strategy "${name}" in --strategies: ${StrategyName.literals.join(", ")}`
        })
      )
      : Effect.succeed(strategy)
  })

/** What `eval` was asked. */
export interface Input {
  readonly questions: Option.Option<string>
  readonly strategies: string
  readonly askModel: Option.Option<string>
  readonly user: Option.Option<string>
  readonly json: boolean
  readonly flags: Settings.Flags
}

/**
 * Removes what an earlier run on a persistent store left under a run's ids: its conversations and
 * its user. These ids are the run's own, never ones an app wrote.
 */
const startOver = (
  strategy: StrategyName,
  recall: boolean,
  turns: ReadonlyArray<Transcript.ConversationTurn>,
  user: string | undefined
) =>
  Effect.gen(function*() {
    const ids = runIds(strategy, recall)
    const memory = yield* ChatMemoryService
    yield* (yield* UserMemoryService).erase(ids.user(user ?? defaultUser))
    for (const name of new Set(turns.map((turn) => turn.conversation))) {
      yield* memory.clearMessages(ids.conversation(name)).pipe(
        Effect.catchTag("ConversationNotFoundError", () => Effect.void)
      )
    }
  })

/** `eval`: each strategy asked for, with and without recall, over the questions file's transcript. */
export const run = ({ askModel, flags, json, questions, strategies, user }: Input) =>
  Effect.gen(function*() {
    const options = yield* Settings.resolve(flags)
    const path = Option.getOrElse(questions, () => defaultQuestions)
    const file = yield* readQuestions(path)
    const turns = Transcript.conversationTurnsOf(yield* Transcript.readEntries(file.transcript))
    const late = file.questions.filter((q) => q.askedAfterTurn > turns.length)
    if (late.length > 0) {
      return yield* new CliError({
        reason: `${
          Report.count(late.length, "question is", "questions are")
        } asked after turn ${turns.length}, the transcript's last (${late.map((q) => q.id).join(", ")})`
      })
    }
    const chosen = yield* parseStrategies(strategies)
    let model: Option.Option<Layer.Layer<LanguageModel.LanguageModel>> = Option.none()
    if (Option.isSome(askModel)) {
      const summarizer = options.summarizer
      if (summarizer?._tag !== "openai") {
        return yield* new CliError({
          reason: `--ask-model needs a model server: set ${Settings.variables.openAiApiKey.name}, or ` +
            `${Settings.variables.openAiBaseUrl.name} for an OpenAI-compatible one`
        })
      }
      model = Option.some(
        OpenAiLanguageModel.layer({ model: askModel.value }).pipe(
          Layer.provide(OpenAiClient.layer({ apiKey: summarizer.apiKey, apiUrl: summarizer.apiUrl })),
          Layer.provide(NodeHttpClient.layerUndici)
        )
      )
    }
    const results: Array<StrategyResult> = []
    // Each run gets a fresh store of the configured kind, so runs never see each other's messages.
    // PGlite runs in memory from the bundled cluster, not initdb. A data directory is not reused.
    const store: ChatMemoryConfig.Store = options.store?._tag === "postgres" || options.store?._tag === "sql"
      ? options.store
      : options.store?._tag === "memory"
      ? { _tag: "memory" }
      : { _tag: "pglite", template: "bundled" }
    const runs = chosen.flatMap((strategy) =>
      options.recall !== "off" && (strategy === "summarization" || strategy === "hierarchical")
        ? [{ strategy, recall: false }, { strategy, recall: true }]
        : [{ strategy, recall: false }]
    )
    const named = Option.getOrUndefined(user)
    for (const { recall, strategy } of runs) {
      const memory = ChatMemoryLive.layer({ ...options, strategy, store })
      const fresh = startOver(strategy, recall, turns, named)
      const once = Option.match(model, {
        onNone: () =>
          Effect.zipRight(fresh, evaluate(strategy, turns, file.questions, Option.none(), recall, named)).pipe(
            Effect.provide(memory)
          ),
        onSome: (layer) =>
          Effect.flatMap(
            Effect.zipRight(fresh, askLanguageModel),
            (ask) => evaluate(strategy, turns, file.questions, Option.some(ask), recall, named)
          ).pipe(Effect.provide(Layer.merge(memory, layer)))
      })
      results.push(yield* once)
    }
    const shown = relative(process.cwd(), path) || path
    if (json) {
      return yield* Console.log(JSON.stringify(
        {
          questions: shown,
          configuration: Settings.describe({ ...options, store }),
          asked: file.questions.length,
          results
        },
        null,
        2
      ))
    }
    const asked = file.questions.map((q) => ({ kind: q.kind ?? null }))
    const kinds = kindsOf(asked).map((kind) => `${asked.filter((q) => kindOf(q) === kind).length} ${kind}`)
    yield* Console.log(
      `${shown}: ${file.questions.length} questions${
        kinds.length === 0 ? "" : ` (${kinds.join(", ")})`
      } over ${turns.length} turns, with these settings (the strategy of each column aside):`
    )
    yield* Console.log(
      `${
        Report.table(
          Settings.rows({ ...options, store, strategy: "summarization" }).filter(([what]) => what !== "strategy")
        )
      }\n`
    )
    yield* Console.log(table(results, file.questions.length))
    yield* Console.log(
      "\nAn answer is in the context when the context holds every one of its literal strings; a model's " +
        "reply is graded the same way, ignoring case." +
        (results.some((r) => r.recallAtK !== null)
          ? " Search recall@k: the questions for which recall's search of the conversation so far, with the " +
            "question as its query, ranks a turn that states the answer among its top k turns."
          : "")
    )
  })
