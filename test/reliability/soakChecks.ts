/**
 * The the invariants invariants of the fault soak, checked against a model of what callers were told:
 * the messages of every `addMessages` that succeeded, in seq order. The store is read through the
 * real repository (no injected faults) to compare.
 */
import { assert } from "@effect/vitest"
import { Effect, Either } from "effect"
import type { ConversationId } from "../../src/domain/ConversationId.js"
import { factsText, omissionText, summaryText } from "../../src/domain/internal/contextText.js"
import type { MemoryContext } from "../../src/domain/MemoryContext.js"
import type { Message, MessageInput } from "../../src/domain/Message.js"
import type { SummarizationRecord, SummaryState } from "../../src/domain/SummaryState.js"
import type * as Store from "../../src/layers/store/Store.js"
import type { RepositoryService } from "../../src/services/RepositoryService.js"
import type { TokenCounter } from "../../src/services/TokenCounter.js"

/** What the checks need of the configuration. */
export interface CheckSettings {
  readonly budget: number
  readonly k: number
  readonly mode: "incremental" | "full" | "layered" | "hierarchical"
  readonly threshold: number
  readonly messageTrigger: { readonly threshold: number; readonly target: number } | undefined
  readonly prune: boolean
  readonly summaryMessages: boolean
}

/** One conversation as its callers know it. */
export interface ConversationModel {
  readonly id: ConversationId
  /** The calls to make, in order: the leading system messages (if any), then one per turn. */
  readonly inputs: ReadonlyArray<ReadonlyArray<typeof MessageInput.Encoded>>
  /** The next input to add (a failed add is tried again). */
  next: number
  /** Every message of a successful add, in seq order. */
  messages: Array<Message>
  exists: boolean
  /** The summary cursor and version last seen: they never go back. */
  cursor: number
  version: number
}

/** Equal message lists: the same instances (the in-memory store keeps them), else equal values. */
export const assertSameMessages = (actual: ReadonlyArray<Message>, expected: ReadonlyArray<Message>, what: string) => {
  if (actual.length === expected.length && actual.every((m, i) => m === expected[i])) return
  assert.deepStrictEqual(actual, expected, what)
}

export const tokens = (messages: ReadonlyArray<Message>) => messages.reduce((n, m) => n + m.tokenCount, 0)

/** The leading system messages of the model, and the rest split into turns (at user messages). */
export const shape = (model: ConversationModel) => {
  let prefix = 0
  while (model.messages[prefix]?.role === "system") prefix += 1
  const rest = model.messages.slice(prefix)
  const turns: Array<Array<Message>> = []
  for (const message of rest) {
    const current = turns.at(-1)
    if (message.role === "user" || current === undefined) turns.push([message])
    else current.push(message)
  }
  return { system: model.messages.slice(0, prefix), rest, turns }
}

/** The store's view of a conversation, read consistently (the summary version did not move meanwhile). */
export interface Snapshot {
  readonly state: SummaryState
  readonly info: RepositoryService.ConversationInfo
  readonly messages: ReadonlyArray<Message>
  readonly records: ReadonlyArray<SummarizationRecord>
}

export const snapshot = (store: Store.Store, id: ConversationId) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 20; attempt++) {
      const before = yield* Effect.either(store.summaries.getSummaryState(id))
      if (Either.isLeft(before)) {
        assert.strictEqual(before.left._tag, "ConversationNotFoundError", before.left.message)
        return undefined
      }
      const info = yield* store.repository.getConversation(id)
      const messages = yield* store.repository.listMessages(id, {})
      const records = yield* store.summaries.listSummarizations(id)
      const state = yield* store.summaries.getSummaryState(id)
      if (state.version === before.right.version) return { state, info, messages, records } satisfies Snapshot
    }
    return assert.fail(`no consistent snapshot of ${id} in 20 attempts`)
  }).pipe(Effect.orDie)

/** Tool calls and their results are on the same side of `cursor`. */
const assertNotSplitAt = (messages: ReadonlyArray<Message>, cursor: number, what: string) => {
  const callSeq = new Map<string, number>()
  for (const m of messages) for (const call of m.metadata.toolCalls ?? []) callSeq.set(call.id, m.seq)
  for (const m of messages) {
    const call = m.metadata.toolCallId === undefined ? undefined : callSeq.get(m.metadata.toolCallId)
    if (call !== undefined) {
      assert.strictEqual(call <= cursor, m.seq <= cursor, `${what} splits a tool call at ${cursor}`)
    }
  }
}

/** Invariants of the store: 5 (cursor, compare-and-set), 7 (nothing lost), 4 (no split at the cursor). */
export const checkStore = (model: ConversationModel, snap: Snapshot | undefined, settings: CheckSettings) => {
  if (!model.exists) {
    assert.isUndefined(snap, `${model.id} holds messages no successful add wrote`)
    return
  }
  if (snap === undefined) return assert.fail(`${model.id} was written but is gone`)
  const { info, records, state } = snap
  // 5. The cursor only moves forward; each applied summarization is one version and one record.
  assert.isAtLeast(state.cursor, model.cursor, "the cursor moved back")
  assert.isAtLeast(state.version, model.version, "the version moved back")
  assert.deepStrictEqual(records.map((r) => r.version), Array.from({ length: state.version }, (_, i) => i + 1))
  records.forEach((record, i) => {
    const previous = records[i - 1]?.toSeq ?? 0
    assert.isAbove(record.toSeq, previous, "a summarization did not move the cursor forward")
    if (settings.mode !== "full") assert.isAbove(record.fromSeq, previous, "two summarizations overlap")
    assert.isAtMost(record.fromSeq, record.toSeq)
  })
  assert.strictEqual(state.cursor, records.at(-1)?.toSeq ?? 0, "the cursor is not the last record's end")
  assert.isAtMost(state.cursor, info.lastSeq)
  // 4. The cursor falls between turns: no tool call is separated from its result by it.
  assertNotSplitAt(model.messages, state.cursor, "the summary cursor")
  const { system } = shape(model)
  const firstAfter = model.messages.find((m) => m.seq > Math.max(state.cursor, system.at(-1)?.seq ?? 0))
  if (firstAfter !== undefined) assert.strictEqual(firstAfter.role, "user", "the cursor cuts a turn")
  // 7. Everything a successful add wrote is there (or summarized and pruned); nothing else is.
  const protectedSeqs = new Set(system.map((m) => m.seq))
  const expected = model.messages.filter((m) => !(settings.prune && m.seq <= state.cursor && !protectedSeqs.has(m.seq)))
  assertSameMessages(snap.messages.filter((m) => m.role !== "summary"), expected, "stored messages differ")
  const summaries = snap.messages.filter((m) => m.role === "summary")
  assert.deepStrictEqual(
    summaries.map((m) => m.metadata.summaryMetadataId),
    settings.summaryMessages ? records.map((r) => r.version) : [],
    "summary messages differ from the records"
  )
  model.cursor = state.cursor
  model.version = state.version
}

/**
 * Invariants 1–4 of a context built between two observed cursors: the budget, the last K turns,
 * the accounting of every message, whole turns and tool calls, the system messages untouched.
 */
export const checkContext = (
  counter: TokenCounter.Service,
  context: MemoryContext,
  model: ConversationModel,
  settings: CheckSettings,
  cursors: { readonly before: number; readonly after: number }
) =>
  Effect.gen(function*() {
    const { rest, system, turns } = shape(model)
    // 4. Leading system messages are never trimmed.
    assertSameMessages(context.system, system, "the system messages were changed")
    const systemTokens = tokens(system)
    const factTokens = context.facts.length === 0
      ? 0
      : yield* counter.countMessage({ content: factsText(context.facts) })
    const summaryTokens = context.summary === null
      ? 0
      : yield* counter.countMessage({ content: summaryText(context.summary) })
    const noticeTokens = context.omissionAnnounced
      ? yield* counter.countMessage({ content: omissionText(context.turnsOmitted) })
      : 0
    assert.strictEqual(
      context.tokenCount,
      systemTokens + factTokens + summaryTokens + noticeTokens + tokens(context.recent)
    )
    // 1. The budget holds whenever the protected part (system messages, facts) fits.
    if (systemTokens + factTokens <= settings.budget) {
      assert.isAtMost(context.tokenCount, settings.budget, "over budget")
    }
    // 2. The last K turns are there, verbatim, whenever they fit beside the protected part.
    const newestK = turns.slice(Math.max(0, turns.length - settings.k)).flat()
    if (systemTokens + factTokens + tokens(newestK) <= settings.budget) {
      assertSameMessages(context.recent.slice(context.recent.length - newestK.length), newestK, "last K turns")
    }
    // Whole newest turns: a suffix of the conversation that starts a turn.
    assertSameMessages(context.recent, rest.slice(rest.length - context.recent.length), "recent is not a suffix")
    if (context.recent.length > 0) assert.strictEqual(context.recent[0]?.role, "user", "recent starts mid-turn")
    // 4. No tool call is separated from its result.
    const calls = new Set(context.recent.flatMap((m) => (m.metadata.toolCalls ?? []).map((c) => c.id)))
    const results = new Set(context.recent.flatMap((m) => m.metadata.toolCallId ?? []))
    assert.deepStrictEqual([...results].filter((x) => !calls.has(x)), [], "a tool result without its call")
    assert.deepStrictEqual([...calls].filter((x) => !results.has(x)), [], "a tool call without its result")
    // 5. The summary shown is one the store held while the context was built.
    assert.isAtLeast(context.summarizedUpTo, cursors.before)
    assert.isAtMost(context.summarizedUpTo, cursors.after)
    // 3. Every message is covered by the summary, shown, or counted as omitted.
    const shown = new Set(context.recent.map((m) => m.seq))
    const uncovered = rest.filter((m) => m.seq > context.summarizedUpTo && !shown.has(m.seq))
    assert.strictEqual(context.messagesOmitted, uncovered.length, "messages omitted")
    const notShown = turns.filter((t) => (t[0]?.seq ?? 0) > context.summarizedUpTo && !shown.has(t[0]?.seq ?? 0))
    assert.strictEqual(context.turnsOmitted, notShown.length, "turns omitted")
    assert.strictEqual(context.turnsShown, context.recent.filter((m) => m.role === "user").length, "turns shown")
  })

/** Once nothing fails, the background catches up: after `awaitIdle` no summarization is due. */
export const checkCaughtUp = (
  counter: TokenCounter.Service,
  model: ConversationModel,
  snap: Snapshot | undefined,
  settings: CheckSettings
) =>
  Effect.gen(function*() {
    if (snap === undefined) return
    const { system } = shape(model)
    const after = Math.max(snap.state.cursor, system.at(-1)?.seq ?? 0)
    const buffer = model.messages.filter((m) => m.seq > after)
    const turns = buffer.filter((m) => m.role === "user").length
    const summary = snap.state.narrative.length === 0
      ? 0
      : yield* counter.countMessage({ content: summaryText(snap.state.narrative) })
    const byTokens = summary + tokens(buffer) > settings.threshold
    const byCount = settings.messageTrigger !== undefined && buffer.length > settings.messageTrigger.threshold
    assert.isFalse(turns > settings.k && (byTokens || byCount), `${model.id}: a summarization is still due when idle`)
  })
