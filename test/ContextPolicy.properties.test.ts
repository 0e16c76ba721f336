/**
 * The context policy as properties (the summarization flow and the invariants): with a summarizer that keeps up nothing is
 * omitted, in either view, with recall or without (each context asked with a query drawn for it,
 * or none); with one that lags or fails, every omitted turn is counted exactly and announced; and a
 * fold never eats into the low-water floor.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, FastCheck as fc, Ref } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import { omissionText, summaryText } from "../src/domain/internal/contextText.js"
import { recalledText } from "../src/domain/internal/recall.js"
import { groupTurns } from "../src/domain/internal/turns.js"
import { type MemoryContext } from "../src/domain/MemoryContext.js"
import type { Message, MessageInput } from "../src/domain/Message.js"
import { type Turn } from "../src/domain/Turn.js"
import { SkillExecutionError } from "../src/errors/SkillExecutionError.js"
import { toPromptMessages } from "../src/layers/ai/ContextPrompt.js"
import { summaryParts } from "../src/layers/skills/internal/prompts.js"
import { defaultSummary } from "../src/layers/skills/internal/scripted.js"
import { type ScriptedSkill } from "../src/layers/skills/ScriptedSkill.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { SummaryStore } from "../src/services/SummaryStore.js"
import { TokenCounter } from "../src/services/TokenCounter.js"
import { defaults, type SummarizationOptions } from "../src/strategies/internal/options.js"
import { newestThatFit } from "../src/strategies/internal/turns.js"
import { conversation, type ConversationSpec } from "./fixtures/arbitraries.js"
import { summarizingMemory } from "./fixtures/layers.js"

type Input = typeof MessageInput.Encoded
type View = SummarizationOptions["view"]

const id = "policy"
const cid = ConversationId.make(id)

const tokens = (messages: ReadonlyArray<Message>) => messages.reduce((n, m) => n + m.tokenCount, 0)
const turnTokens = (turns: ReadonlyArray<Turn>) => turns.reduce((n, t) => n + t.tokenCount, 0)
const seqsOf = (messages: ReadonlyArray<Message>) => messages.map((m) => m.seq)

/** The knobs of the policy a run turns. */
interface Policy {
  readonly budget: number
  readonly k: number
  readonly cap: number
  readonly lowWater: number
  readonly highWater: number
  readonly mode: SummarizationOptions["mode"]
  /** The share of the budget the recalled block may take (`recallTokenBudget`). */
  readonly share: number
}

/** The default watermarks. */
const defaultWatermarks = { lowWater: defaults.lowWater, highWater: defaults.highWater }

/**
 * Any watermarks `0 <= lowWater < highWater <= 1`, in hundredths: the defaults, a high-water mark
 * at or next to its bound 1 (the least headroom while a fold runs), or anything else.
 */
const anyWatermarks = fc.oneof(
  { weight: 1, arbitrary: fc.constant(defaultWatermarks) },
  {
    weight: 3,
    arbitrary: fc.record({
      lowWater: fc.integer({ min: 0, max: 98 }).map((n) => n / 100),
      highWater: fc.constantFrom(0.99, 1)
    })
  },
  {
    weight: 2,
    arbitrary: fc.integer({ min: 0, max: 99 }).chain((low) =>
      fc.integer({ min: low + 1, max: 100 }).map((high) => ({ lowWater: low / 100, highWater: high / 100 }))
    )
  }
)

/**
 * Small budgets, so that folds happen every few turns: with the conversations below, a run at the
 * default watermarks folds three times (median), twice or more in three runs out of four.
 */
const policyWith = (
  watermarks: fc.Arbitrary<{ readonly lowWater: number; readonly highWater: number }>
): fc.Arbitrary<Policy> =>
  fc.record({
    budget: fc.integer({ min: 300, max: 750 }),
    k: fc.integer({ min: 1, max: 3 }),
    capFactor: fc.double({ min: 0.1, max: 0.35, noNaN: true }),
    watermarks,
    mode: fc.constantFrom<Policy["mode"]>("incremental", "full", "layered"),
    share: fc.oneof(fc.constant(defaults.recallTokenBudget), fc.double({ min: 0, max: 0.6, noNaN: true }))
  }).map(({ budget, capFactor, k, mode, share, watermarks }) => ({
    budget,
    k,
    cap: Math.max(10, Math.floor(budget * capFactor)),
    mode,
    share,
    ...watermarks
  }))

const policy = policyWith(anyWatermarks)

/** Whether the summarizer overruns its limit (the worst case the cap is for), or keeps within it. */
/**
 * The summarizer of a run: concise (the scripted default), verbose (a model that overruns its
 * limit), or verbatim (lines a turn says word for word, as the offline skill writes them: the
 * context leaves them out while it shows that turn).
 */
type Summarizer = "concise" | "verbose" | "verbatim"

const verbose = fc.constantFrom<Summarizer>("verbose", "verbose", "verbatim", "concise")

const optionsOf = (p: Policy, view: View): Partial<SummarizationOptions> => ({
  kRawTurns: p.k,
  tokenBudget: p.budget,
  summaryTokenCap: p.cap,
  lowWater: p.lowWater,
  highWater: p.highWater,
  mode: p.mode,
  view,
  recallTokenBudget: p.share,
  retries: 0
})

/**
 * Conversations of long and short turns, tool calls with their results, system messages leading and
 * mid-way: enough turns for a few folds at the budgets above, few enough that a failing case
 * shrinks quickly (each step of a run reads the whole conversation). Hundreds of turns: test 1d.
 */
const maxTurns = 24
const conversations = conversation({ minTurns: 8, maxTurns })

/**
 * The query each context is asked with, drawn per context: none (a plain context), some words of
 * a message written so far (recall then finds at least that message), or any text.
 */
type QueryDraw =
  | { readonly _tag: "none" }
  | { readonly _tag: "words"; readonly message: number; readonly words: number }
  | { readonly _tag: "text"; readonly text: string }

const queryDraw: fc.Arbitrary<QueryDraw> = fc.oneof(
  { weight: 1, arbitrary: fc.constant({ _tag: "none" as const }) },
  {
    weight: 3,
    arbitrary: fc.record({ message: fc.nat(), words: fc.integer({ min: 1, max: 8 }) }).map((r) => ({
      _tag: "words" as const,
      ...r
    }))
  },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 40 }).map((text) => ({ _tag: "text" as const, text })) }
)

/** A query per step of a run. */
const queryDraws = fc.array(queryDraw, { minLength: maxTurns, maxLength: maxTurns })

/** The query a draw gives, over the messages written so far; undefined for a plain context. */
const queryOf = (draw: QueryDraw | undefined, written: ReadonlyArray<Input>): string | undefined => {
  if (draw === undefined || draw._tag === "none") return undefined
  const text = draw._tag === "text"
    ? draw.text
    : (written[draw.message % Math.max(1, written.length)]?.content ?? "").split(/\s+/).slice(0, draw.words).join(" ")
  return text.trim().length === 0 ? undefined : text
}

/** A context, and the conversation as stored when it was read. */
interface Observation {
  readonly context: MemoryContext
  /** Every stored message, in seq order (no `summary` records: the strategies here write none). */
  readonly stored: ReadonlyArray<Message>
  /** The leading system messages. */
  readonly system: ReadonlyArray<Message>
  /** The turns after them. */
  readonly turns: ReadonlyArray<Turn>
  /** Tokens of the summary message as shown (0 without one). */
  readonly summaryTokens: number
  /** Tokens of the notice of `turnsOmitted` omitted turns, as it would be rendered. */
  readonly noticeTokens: number
  /** The query the context was asked with, if any. */
  readonly query: string | undefined
  /** Tokens of the recalled block as sent (0 without one). */
  readonly recalledSent: number
  /** The text of each message of the rendered prompt. */
  readonly prompt: ReadonlyArray<string>
}

const leadingSystem = (stored: ReadonlyArray<Message>) => {
  let n = 0
  while (stored[n]?.role === "system") n += 1
  return stored.slice(0, n)
}

const observe = (query?: string) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const counter = yield* TokenCounter
    const context = yield* memory.getContext(id, query === undefined ? undefined : { query })
    const stored = yield* memory.getMessages(id)
    const system = leadingSystem(stored)
    const prompt = toPromptMessages(context).map((message) =>
      typeof message.content === "string"
        ? message.content
        : message.content.map((part) => (part.type === "text" ? part.text : "")).join("")
    )
    return {
      context,
      stored,
      system,
      turns: groupTurns(stored.slice(system.length)).turns,
      summaryTokens: context.summary === null
        ? 0
        : yield* counter.countMessage({ content: summaryText(context.summary) }),
      noticeTokens: yield* counter.countMessage({ content: omissionText(context.turnsOmitted) }),
      query,
      recalledSent: context.recalled.length === 0
        ? 0
        : yield* counter.countMessage({ content: recalledText(context.recalled, { dated: context.dated }) }),
      prompt
    } satisfies Observation
  })

/**
 * What the summary as shown leaves out: without a query, only lines (of 4 words or more) that a
 * shown turn the summary covers says word for word; with a query, nothing but what the budget cuts.
 */
const checkRepeats = (o: Observation, narrative: string, label: string) => {
  const { context } = o
  if (context.summaryTruncated || narrative.length === 0) return
  // Left out whole while every turn is shown: it would only repeat them.
  if (context.summary === null && context.turnsShown === o.turns.length) return
  // Otherwise a summary not shown at all is one whose every line the turns shown say.
  const shown = context.summary === null ? [] : context.summary.split("\n")
  const lines = narrative.split("\n")
  // The lines shown are the narrative's, in order.
  let at = 0
  for (const line of shown) {
    while (at < lines.length && lines[at] !== line) at += 1
    assert.isBelow(at, lines.length, `${label}: a summary line shown that the narrative does not hold: ${line}`)
    at += 1
  }
  if (shown.length === lines.length) return
  assert.isUndefined(o.query, `${label}: the summary left lines out of a context asked with a query`)
  const covered = context.recent.filter((m) => m.seq <= context.summarizedUpTo)
  const said = covered.map((m) => m.content.toLowerCase().replace(/\s+/g, " "))
  for (const line of lines.filter((l) => !shown.includes(l))) {
    const text = line.replace(/^User: /, "").toLowerCase().replace(/\s+/g, " ").trim()
    assert.isAtLeast(text.split(" ").length, 4, `${label}: a short line left out: ${line}`)
    assert.isTrue(
      said.some((content) => content.includes(text)),
      `${label}: a line left out that no shown turn says: ${line}`
    )
  }
}

/** Whether the newest K turns fit the budget beside the leading system messages (invariant 2's "whenever they fit"). */
const newestKFit = (o: Observation, p: Policy) =>
  tokens(o.system) + turnTokens(o.turns.slice(Math.max(0, o.turns.length - p.k))) <= p.budget

/**
 * the invariants on one context, as far as the public API shows it (1: budget; 2: the newest K turns;
 * 3: nothing silently lost, omissions counted exactly and announced; 4: tool pairs and leading
 * system messages), and the context's own accounting.
 */
const checkContext = (o: Observation, p: Policy, view: View, label: string) => {
  const { context } = o
  const at = (what: string) => `${label}: ${what}`
  // 4. The leading system messages: all of them, whole, and nowhere else.
  assert.deepStrictEqual(context.system, o.system, at("system is not the leading system messages"))
  const leading = new Set(seqsOf(o.system))
  assert.isFalse(context.recent.some((m) => leading.has(m.seq)), at("a leading system message is in recent"))
  // 1. The budget, whenever the protected part fits; and the count is what is shown.
  assert.strictEqual(context.tokenBudget, p.budget, at("tokenBudget"))
  assert.strictEqual(
    context.tokenCount,
    tokens(context.system) + o.summaryTokens + (context.omissionAnnounced ? o.noticeTokens : 0) +
      tokens(context.recent) + context.recalledTokens,
    at("tokenCount is not system + summary + notice + recent + recalled")
  )
  if (tokens(o.system) <= p.budget) assert.isAtMost(context.tokenCount, p.budget, at("over budget"))
  // Recent is whole turns, in seq order, contiguous: the newest messages of the conversation.
  const rest = o.stored.slice(o.system.length)
  assert.deepStrictEqual(
    seqsOf(context.recent),
    seqsOf(rest.slice(rest.length - context.recent.length)),
    at("recent is not a contiguous suffix of the conversation")
  )
  context.recent.forEach((m, i) => assert.isAbove(m.seq, context.recent[i - 1]?.seq ?? 0, at("recent out of order")))
  const first = context.recent[0]
  if (first !== undefined) assert.isTrue(o.turns.some((t) => t.firstSeq === first.seq), at("recent starts mid-turn"))
  assert.strictEqual(context.turnsShown, groupTurns(context.recent).turns.length, at("turnsShown"))
  const shownTurns = o.turns.slice(o.turns.length - context.turnsShown)
  // Covered turns: shown turns the summary also covers; the stable view shows only unsummarized ones.
  assert.strictEqual(
    context.turnsCovered,
    shownTurns.filter((t) => t.lastSeq <= context.summarizedUpTo).length,
    at("turnsCovered")
  )
  assert.isAtMost(context.turnsCovered, context.turnsShown, at("turnsCovered > turnsShown"))
  if (view === "stable") assert.strictEqual(context.turnsCovered, 0, at("the stable view shows a summarized turn"))
  // 2. The newest K turns, verbatim, whenever they fit.
  if (newestKFit(o, p)) {
    const newest = o.turns.slice(Math.max(0, o.turns.length - p.k)).flatMap((t) => t.messages)
    assert.deepStrictEqual(
      context.recent.slice(Math.max(0, context.recent.length - newest.length)),
      newest,
      at(`the newest ${p.k} turns are not shown verbatim`)
    )
  }
  // 4. A tool call and its results are never split, by recent nor by the summary cursor.
  const calls = new Map<string, number>()
  for (const m of o.stored) for (const call of m.metadata.toolCalls ?? []) calls.set(call.id, m.seq)
  const inRecent = new Set(seqsOf(context.recent))
  for (const m of o.stored) {
    const call = m.metadata.toolCallId === undefined ? undefined : calls.get(m.metadata.toolCallId)
    if (call === undefined) continue
    assert.strictEqual(inRecent.has(call), inRecent.has(m.seq), at(`call ${call} and result ${m.seq} split by recent`))
    assert.strictEqual(
      call <= context.summarizedUpTo,
      m.seq <= context.summarizedUpTo,
      at(`call ${call} and result ${m.seq} split by the cursor`)
    )
  }
  // 5. The cursor lies at a turn boundary of the conversation.
  assert.isTrue(
    context.summarizedUpTo === 0 || o.turns.some((t) => t.lastSeq === context.summarizedUpTo),
    at(`cursor ${context.summarizedUpTo} is not at a turn boundary`)
  )
  // 3. Every message after the cursor is shown or counted as omitted; every turn opened by a user
  // message after the cursor and not shown is counted in turnsOmitted (counted here from the log).
  const shown = new Set(seqsOf([...context.system, ...context.recent]))
  const uncovered = o.stored.filter((m) => m.seq > context.summarizedUpTo && !shown.has(m.seq))
  assert.strictEqual(context.messagesOmitted, uncovered.length, at("messagesOmitted"))
  assert.strictEqual(context.turnsOmitted, uncovered.filter((m) => m.role === "user").length, at("turnsOmitted"))
  // The prompt is the system messages, the summary, the notice when announced, recent, then the
  // recalled block.
  assert.strictEqual(
    o.prompt.length,
    context.system.length + (context.summary === null ? 0 : 1) + (context.omissionAnnounced ? 1 : 0) +
      context.recent.length + (context.recalled.length === 0 ? 0 : 1),
    at("the prompt holds other messages than the context's")
  )
  checkRecall(o, p, label)
  // Omitted turns are announced to the model whenever the notice fits beside the system messages,
  // the summary as shown and the newest K turns shown (those win over the notice).
  if (context.turnsOmitted === 0) {
    assert.isFalse(context.omissionAnnounced, at("an omission announced with nothing omitted"))
    return
  }
  const protectedTail = turnTokens(shownTurns.slice(Math.max(0, shownTurns.length - p.k)))
  const fits = tokens(o.system) + o.summaryTokens + o.noticeTokens + protectedTail <= p.budget
  if (fits) assert.isTrue(context.omissionAnnounced, at(`${context.turnsOmitted} turns omitted silently`))
  if (context.omissionAnnounced) {
    assert.include(o.prompt, omissionText(context.turnsOmitted), at("the notice is not in the prompt"))
  }
}

/**
 * Recall on one context: none without a query; otherwise whole turns of the log, older than the
 * turns shown, each once, in a block within its share of the budget whose count bounds what it
 * takes as sent.
 */
const checkRecall = (o: Observation, p: Policy, label: string) => {
  const { context } = o
  const at = (what: string) => `${label}, query ${JSON.stringify(o.query)}: ${what}`
  if (o.query === undefined) {
    assert.deepStrictEqual([context.recalled.length, context.recalledTokens], [0, 0], at("recall without a query"))
    return
  }
  if (context.recalled.length === 0) {
    assert.strictEqual(context.recalledTokens, 0, at("recalledTokens without a recalled turn"))
    return
  }
  assert.isAtMost(context.recalledTokens, Math.floor(p.share * p.budget), at("the block passes its share"))
  assert.isAtLeast(context.recalledTokens, o.recalledSent, at("the block takes more than it counts"))
  const firstShown = context.recent[0]?.seq ?? Number.POSITIVE_INFINITY
  const seen = new Set<number>()
  for (const turn of context.recalled) {
    const whole = o.turns.find((t) => t.firstSeq === turn.fromSeq)
    assert.deepStrictEqual(
      seqsOf(turn.messages),
      seqsOf(whole?.messages ?? []),
      at(`turn ${turn.fromSeq} is not whole`)
    )
    assert.isBelow(turn.toSeq, firstShown, at(`turn ${turn.fromSeq} is also shown`))
    for (const m of turn.messages) {
      assert.isFalse(seen.has(m.seq), at(`seq ${m.seq} recalled twice`))
      seen.add(m.seq)
    }
  }
}

/** 7. Nothing written is lost: the log holds every message written, in order. */
const checkLog = (stored: ReadonlyArray<Message>, written: ReadonlyArray<Input>, label: string) =>
  assert.deepStrictEqual(
    stored.map((m) => [m.role, m.content]),
    written.map((m) => [m.role, m.content]),
    `${label}: the log is not what was written`
  )

/** 5. The summary state only moves forward. */
const monotone = Effect.gen(function*() {
  const repository = yield* SummaryStore
  const last = yield* Ref.make({ cursor: 0, version: 0 })
  return (label: string) =>
    Effect.gen(function*() {
      const state = yield* repository.getSummaryState(cid)
      const before = yield* Ref.getAndSet(last, { cursor: state.cursor, version: state.version })
      assert.isAtLeast(state.cursor, before.cursor, `${label}: the cursor moved back`)
      assert.isAtLeast(state.version, before.version, `${label}: the version moved back`)
      return state
    })
})

/** A summarize skill that answers only when let through: each `release` lets the calls waiting now answer. */
const gatedSkill = Effect.gen(function*() {
  const gate = yield* Ref.make(yield* Deferred.make<undefined>())
  const script: ScriptedSkill.Script = {
    summarize: (input) => Effect.as(Effect.flatMap(Ref.get(gate), Deferred.await), defaultSummary(input))
  }
  const open = (next: Deferred.Deferred<undefined>) =>
    Effect.gen(function*() {
      yield* Deferred.succeed(yield* Ref.getAndSet(gate, next), undefined)
      // Let the job commit, plan again and, if another fold is due, wait at the next gate.
      yield* Effect.repeatN(Effect.yieldNow(), 50)
    })
  const opened = yield* Deferred.make<undefined>()
  yield* Deferred.succeed(opened, undefined)
  return { script, release: Effect.flatMap(Deferred.make<undefined>(), open), openForGood: open(opened) }
})

const unavailable = new SkillExecutionError({ skillId: "scripted", reason: "Unavailable", retryable: false })

/** How the summarizer falls behind in property 2. */
type Lag = "gated" | "failing" | "unawaited"

/**
 * Runs of a property: bounded by their number and by the size of the conversations, never by time
 * (a time limit that fails the test is a timed assertion).
 */
const fastCheck = { numRuns: 30 }

describe("context policy properties", () => {
  /**
   * Property 1. With a summarizer that keeps up (each turn is added, the background awaited, then
   * the context read), concise or verbose (a model that overruns its limit, cut to
   * `summaryTokenCap`), in both views, at every step: the invariants holds (`checkContext`), and no turn
   * is omitted (`turnsOmitted === 0`) whenever the newest K turns fit the budget beside the leading
   * system messages. (When they do not, the summarizer may not fold them, it always leaves K turns,
   * and nothing can show them: the omission is then only required to be counted and announced.)
   * Each context is asked with a query drawn for it (recall on, the default), or none: recall
   * never opens a gap, and its block holds whole older turns within its share (`checkRecall`).
   * Also: the summary state only moves forward, nothing written is lost, and in the stable view the
   * rendered prompt only grows at its end between two folds. 1a is invariant 3's own case, the
   * default watermarks; 1b, any watermarks.
   */
  it.effect.prop(
    "1a. a summarizer that keeps up, default watermarks: nothing omitted in either view, with recall or without, the invariants at every step",
    { spec: conversations, p: policyWith(fc.constant(defaultWatermarks)), verbose, queries: queryDraws },
    ({ p, queries, spec, verbose }) =>
      Effect.forEach(["full", "stable"] as const, (view) => keepsUp(spec, p, view, verbose, queries), {
        discard: true
      }),
    { fastCheck }
  )

  it.effect.prop(
    "1b. a summarizer that keeps up, any watermarks: nothing omitted in either view, with recall or without, the invariants at every step",
    { spec: conversations, p: policy, verbose, queries: queryDraws },
    ({ p, queries, spec, verbose }) =>
      Effect.forEach(["full", "stable"] as const, (view) => keepsUp(spec, p, view, verbose, queries), {
        discard: true
      }),
    { fastCheck }
  )

  // 1b's counterexample, pinned: with `highWater` 1 the buffer may hold `room` tokens without a
  // fold, but the summary as shown takes more than `summaryTokenCap` (its heading and the message
  // overhead), so the oldest unsummarized turn no longer fits.
  it.effect("1c. a summarizer that keeps up, highWater 1, a summary at its cap: nothing omitted", () => {
    const spec: ConversationSpec = {
      system: [],
      turns: Array.from({ length: 8 }, (_, i) => [
        { role: "user", content: `Question ${i + 1}`.padEnd(40, ".") },
        { role: "assistant", content: `Answer ${i + 1}`.padEnd(360, ".") }
      ])
    }
    const p: Policy = { budget: 600, k: 1, cap: 150, lowWater: 0.5, highWater: 1, mode: "incremental", share: 0.25 }
    return Effect.forEach(["full", "stable"] as const, (view) => keepsUp(spec, p, view, "verbose"), { discard: true })
  })

  // The long replay the properties leave out: hundreds of turns, so dozens of folds (and of merged
  // layers), at the default watermarks with a verbose summarizer, a query drawn for each context;
  // each mode once, in one view or the other.
  it.effect("1d. a summarizer that keeps up, 200 turns in each mode: nothing omitted, the invariants at every step", () => {
    const [spec] = fc.sample(conversation({ minTurns: 200, maxTurns: 200 }), { seed: 1, numRuns: 1 })
    const [queries] = fc.sample(fc.array(queryDraw, { minLength: 200, maxLength: 200 }), { seed: 1, numRuns: 1 })
    if (spec === undefined || queries === undefined) return Effect.dieMessage("no conversation sampled")
    const p = { ...defaultWatermarks, budget: 500, k: 2, cap: 100, share: defaults.recallTokenBudget }
    return Effect.forEach(
      [["incremental", "stable"], ["full", "full"], ["layered", "stable"]] as const,
      ([mode, view]) => keepsUp(spec, { ...p, mode }, view, "verbose", queries),
      { discard: true }
    )
  })

  /**
   * Property 2. With a summarizer that lags (`gated`: it answers only when the test lets it, at
   * random steps; `unawaited`: it answers at once, but contexts are read right after each write,
   * the background awaited only at random steps) or fails (`failing`: every call fails), in both
   * views, at every step: the invariants holds, `turnsOmitted` is exactly the number of user-opened turns
   * after the summary cursor that `recent` does not show (counted from `getMessages`), and whenever
   * `turnsOmitted > 0` and the notice fits beside the system messages, the summary as shown and the
   * newest K turns shown, `omissionAnnounced` is true and the rendered prompt holds
   * `omissionText(turnsOmitted)`. Once a lagging summarizer catches up, nothing is omitted (when
   * the newest K turns fit). Each context is asked with a query drawn for it, or none: recall
   * never omits a turn more.
   */
  it.effect.prop(
    "2. a summarizer that lags or fails: every omitted turn counted exactly and announced",
    {
      spec: conversations,
      p: policy,
      lag: fc.constantFrom<Lag>("gated", "failing", "unawaited"),
      steps: fc.array(fc.boolean(), { minLength: maxTurns, maxLength: maxTurns }),
      queries: queryDraws
    },
    ({ lag, p, queries, spec, steps }) =>
      Effect.forEach(["full", "stable"] as const, (view) => lags(spec, p, view, lag, steps, queries), {
        discard: true
      }),
    { fastCheck }
  )

  /**
   * Property 3, the fold floor. With `room = budget − summaryTokenCap − tokens(leading system)` and
   * `L = lowWater × room`, for any watermarks `0 <= lowWater < highWater <= 1` and with
   * `chunkSummarizeThreshold` unset or set, and each turn added then the background awaited (so no
   * write lands during a job): every applied fold (a summarization record, `fromSeq..toSeq`) starts
   * at the previous cursor, ends at a turn boundary and folds at least one turn; the turns it
   * leaves unsummarized, U, are at least K; and it never folds into the floor: U holds at least as
   * many turns as the newest turns of the buffer it folded from that fit L together — put
   * otherwise, either U already passes L, or the newest turn it folded would not have fitted
   * beside U within L. Besides: a job's first fold was due (the buffer held more than K turns and
   * passed `highWater × room`, or summary + buffer passed the explicit threshold); once idle
   * nothing is due; and with the watermarks, a job that folded leaves at most L unsummarized, or
   * just K turns.
   */
  it.effect.prop(
    "3a. the fold floor, with the watermark trigger: a fold leaves at least K turns and never less than lowWater × room holds",
    { spec: conversations, p: policy },
    ({ p, spec }) => folds(spec, p, undefined),
    { fastCheck }
  )

  it.effect.prop(
    "3b. the fold floor, with an explicit chunkSummarizeThreshold: a fold leaves at least K turns and never less than lowWater × room holds",
    { spec: conversations, p: policy, threshold: fc.double({ min: 0.3, max: 2.5, noNaN: true }) },
    ({ p, spec, threshold }) => folds(spec, p, Math.max(1, Math.floor(p.budget * threshold))),
    { fastCheck }
  )

  // 3b's counterexample, pinned: the threshold fires while the whole buffer fits `room`, and the
  // planner then keeps only K turns, below what `lowWater × room` holds.
  it.effect("3c. an explicit threshold below what room holds: a fold leaves what lowWater × room holds", () => {
    const spec: ConversationSpec = {
      system: [],
      turns: Array.from({ length: 12 }, (_, i) => [
        { role: "user", content: `Question ${i + 1}`.padEnd(40, ".") },
        { role: "assistant", content: `Answer ${i + 1}`.padEnd(48, ".") }
      ])
    }
    const p: Policy = { ...defaultWatermarks, budget: 600, k: 1, cap: 150, mode: "incremental", share: 0.25 }
    return folds(spec, p, 300)
  })
})

/**
 * A summarizer that writes more than it is asked (a model overrunning its limit): every summary is
 * cut to `summaryTokenCap`, the longest summary there can be.
 */
const verboseSkill: ScriptedSkill.Script = {
  summarize: (input) => Effect.succeed(defaultSummary(input).padEnd(input.maxTokens * 8, " ~"))
}

/**
 * Each user message's first line as the offline skill writes it (`User: …`), after the summary so
 * far: the scripted default over those lines, which keeps the newest within its length.
 */
const verbatimSkill: ScriptedSkill.Script = {
  summarize: (input) => {
    const said = input.turns.flatMap((turn) => turn.messages)
      .filter((message) => message.role === "user")
      .map((message) => `User: ${message.content.split("\n")[0] ?? ""}`)
    return Effect.succeed(defaultSummary({
      ...input,
      existingSummary: { _tag: "Narrative", text: [...summaryParts(input.existingSummary), ...said].join("\n") },
      turns: []
    }))
  }
}

const skills: Record<Summarizer, ScriptedSkill.Script> = { concise: {}, verbose: verboseSkill, verbatim: verbatimSkill }

const keepsUp = (
  spec: ConversationSpec,
  p: Policy,
  view: View,
  summarizer: Summarizer,
  queries: ReadonlyArray<QueryDraw> = []
) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const forward = yield* monotone
    const written: Array<Input> = [...spec.system]
    if (spec.system.length > 0) yield* memory.addMessages(id, spec.system)
    let previous: { readonly cursor: number; readonly prompt: ReadonlyArray<unknown> } | undefined
    for (const [i, turn] of spec.turns.entries()) {
      const label = `${view} view, turn ${i + 1}`
      yield* memory.addMessages(id, turn)
      written.push(...turn)
      yield* memory.awaitIdle(id)
      const o = yield* observe(queryOf(queries[i], written))
      checkContext(o, p, view, label)
      checkLog(o.stored, written, label)
      const state = yield* forward(label)
      assert.strictEqual(o.context.summarizedUpTo, state.cursor, `${label}: summarizedUpTo`)
      checkRepeats(o, state.narrative, label)
      const kFit = newestKFit(o, p)
      if (kFit) assert.strictEqual(o.context.turnsOmitted, 0, `${label}: turns omitted by a summarizer that keeps up`)
      // The stable view: between two folds the prompt only grows at its end (the recalled block,
      // last, is not part of what a cache keeps).
      const prompt = toPromptMessages(o.context).slice(0, o.context.recalled.length === 0 ? undefined : -1)
      if (view === "stable" && kFit && previous !== undefined && previous.cursor === state.cursor) {
        assert.deepStrictEqual(
          prompt.slice(0, previous.prompt.length),
          previous.prompt,
          `${label}: the stable prompt changed before its end without a fold`
        )
      }
      previous = kFit ? { cursor: state.cursor, prompt } : undefined
    }
  }).pipe(Effect.provide(summarizingMemory(optionsOf(p, view), skills[summarizer])))

const lags = (
  spec: ConversationSpec,
  p: Policy,
  view: View,
  lag: Lag,
  steps: ReadonlyArray<boolean>,
  queries: ReadonlyArray<QueryDraw>
) =>
  Effect.gen(function*() {
    const gated = yield* gatedSkill
    const script: ScriptedSkill.Script = lag === "gated"
      ? gated.script
      : lag === "failing"
      ? { summarize: () => Effect.fail(unavailable) }
      : {}
    yield* Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const forward = yield* monotone
      const written: Array<Input> = [...spec.system]
      if (spec.system.length > 0) yield* memory.addMessages(id, spec.system)
      for (const [i, turn] of spec.turns.entries()) {
        const label = `${lag} summarizer, ${view} view, turn ${i + 1}`
        yield* memory.addMessages(id, turn)
        written.push(...turn)
        if (steps[i] === true) {
          // The gated summarizer is let through once; the others are awaited (never the gated
          // one: it would wait for ever).
          yield* lag === "gated" ? gated.release : memory.awaitIdle(id)
        }
        const o = yield* observe(queryOf(queries[i], written))
        checkContext(o, p, view, label)
        checkLog(o.stored, written, label)
        const state = yield* forward(label)
        // Read after the context: a fold may have landed in between, never moving the cursor back.
        assert.isAtMost(o.context.summarizedUpTo, state.cursor, `${label}: summarizedUpTo ahead of the state`)
        if (lag === "failing") assert.strictEqual(state.cursor, 0, `${label}: a failing summarizer moved the cursor`)
      }
      if (lag === "failing") return
      // The summarizer catches up: then nothing is omitted.
      if (lag === "gated") yield* gated.openForGood
      yield* memory.awaitIdle(id)
      const label = `${lag} summarizer caught up, ${view} view`
      const o = yield* observe(queryOf(queries[queries.length - 1], written))
      checkContext(o, p, view, label)
      checkLog(o.stored, written, label)
      if (newestKFit(o, p)) assert.strictEqual(o.context.turnsOmitted, 0, `${label}: turns omitted`)
    }).pipe(Effect.provide(summarizingMemory(optionsOf(p, view), script)))
  })

const folds = (spec: ConversationSpec, p: Policy, threshold: number | undefined) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const repository = yield* SummaryStore
    const counter = yield* TokenCounter
    const summaryTokensOf = (narrative: string) =>
      narrative.length === 0 ? Effect.succeed(0) : counter.countMessage({ content: summaryText(narrative) })
    if (spec.system.length > 0) yield* memory.addMessages(id, spec.system)
    let checked = 0
    let cursor = 0
    let summaryTokens = 0
    for (const [i, turn] of spec.turns.entries()) {
      const label = `turn ${i + 1}`
      yield* memory.addMessages(id, turn)
      yield* memory.awaitIdle(id)
      const stored = yield* memory.getMessages(id)
      const system = leadingSystem(stored)
      const turns = groupTurns(stored.slice(system.length)).turns
      const room = Math.max(0, p.budget - p.cap - tokens(system))
      const floor = p.lowWater * room
      const records = (yield* repository.listSummarizations(cid)).slice(checked)
      checked += records.length
      for (const [j, record] of records.entries()) {
        const at = `${label}, fold ${record.fromSeq}..${record.toSeq}`
        const buffer = turns.filter((t) => t.firstSeq > cursor)
        const folded = buffer.filter((t) => t.lastSeq <= record.toSeq)
        const left = buffer.filter((t) => t.firstSeq > record.toSeq)
        // Starting at the cursor, no fold reads a message another one folded (the invariants.6).
        assert.strictEqual(record.fromSeq, buffer[0]?.firstSeq, `${at}: does not start at the cursor ${cursor}`)
        assert.strictEqual(folded.length + left.length, buffer.length, `${at}: ends mid-turn`)
        assert.isAtLeast(folded.length, 1, `${at}: folds nothing`)
        if (j === 0) {
          // The trigger: nothing is folded unless due.
          assert.isAbove(buffer.length, p.k, `${at}: folded with ${buffer.length} turns waiting`)
          if (threshold === undefined) {
            assert.isAbove(turnTokens(buffer), p.highWater * room, `${at}: folded below the high-water mark`)
          } else {
            assert.isAbove(summaryTokens + turnTokens(buffer), threshold, `${at}: folded below the threshold`)
          }
        }
        // The floor.
        assert.isAtLeast(left.length, p.k, `${at}: leaves ${left.length} turns, fewer than K = ${p.k}`)
        assert.isAtLeast(
          left.length,
          newestThatFit(buffer, floor),
          `${at}: leaves ${turnTokens(left)} tokens in ${left.length} turns of ${buffer.length} waiting ` +
            `(${turnTokens(buffer)} tokens), below lowWater × room = ${floor}`
        )
        cursor = record.toSeq
      }
      const state = yield* repository.getSummaryState(cid)
      assert.strictEqual(state.cursor, cursor, `${label}: the cursor is not the last fold's end`)
      summaryTokens = yield* summaryTokensOf(state.narrative)
      // Once idle, nothing is due (with an explicit threshold, unless a fold would go below the
      // floor); with the watermarks, a job that folded went down to the floor.
      const buffer = turns.filter((t) => t.firstSeq > cursor)
      if (buffer.length > p.k) {
        if (threshold === undefined) {
          assert.isAtMost(turnTokens(buffer), p.highWater * room, `${label}: idle above the high-water mark`)
          if (records.length > 0) assert.isAtMost(turnTokens(buffer), floor, `${label}: a fold stopped above the floor`)
        } else if (summaryTokens + turnTokens(buffer) > threshold) {
          // Past the threshold only where folding would go below the floor: the whole buffer fits it.
          assert.isAtMost(turnTokens(buffer), floor, `${label}: idle above the threshold and above the floor`)
        }
      }
    }
  }).pipe(Effect.provide(summarizingMemory({ ...optionsOf(p, "full"), chunkSummarizeThreshold: threshold })))
