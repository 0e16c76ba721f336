import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import { summaryText } from "../src/domain/internal/contextText.js"
import { dateHeading, headingDate } from "../src/domain/internal/transcript.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import { summaryParts } from "../src/layers/skills/internal/prompts.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { SummaryStore } from "../src/services/SummaryStore.js"
import { TokenCounter } from "../src/services/TokenCounter.js"
import * as HierarchicalStrategy from "../src/strategies/HierarchicalStrategy.js"
import * as NarrativeLines from "../src/strategies/internal/summarizer/narrativeLines.js"
import * as Fake from "./fixtures/fakeOpenAi.js"

const c = ConversationId.make("c")

/**
 * The hierarchical strategy with small caps, so that a few turns fold, over `skill` (a layer of the
 * skill service, and of what else it provides).
 */
const memoryOver = <S, E, R>(
  narrativeFold: HierarchicalStrategy.HierarchicalOptions["narrativeFold"],
  skill: Layer.Layer<S, E, R>
) =>
  ChatMemory.layer.pipe(
    Layer.provideMerge(HierarchicalStrategy.layer({
      kRawTurns: 2,
      tokenBudget: 700,
      summaryTokenCap: 100,
      maxNarrativeTokens: 200,
      maxFactTokens: 100,
      retries: 0,
      narrativeFold
    })),
    Layer.provideMerge(skill),
    Layer.provideMerge(MemoryStore.layer),
    Layer.provideMerge(ApproximateTokenCounter.layer)
  )

const memory = (
  narrativeFold: HierarchicalStrategy.HierarchicalOptions["narrativeFold"],
  script: ScriptedSkill.ScriptedSkill.Script
) => memoryOver(narrativeFold, ScriptedSkill.layer(script))

const turn = (i: number) => [
  { role: "user" as const, content: `Question ${i} about order ORD-${1000 + i}.`.padEnd(60, ".") },
  { role: "assistant" as const, content: `Answer ${i}.`.padEnd(120, ".") }
]

/**
 * Adds `turns` turns, each awaited, and returns the narratives the summary state held: the empty
 * one first, then each new one once.
 */
const narrativesOver = (turns: number) =>
  Effect.gen(function*() {
    const service = yield* ChatMemoryService
    const repository = yield* SummaryStore
    const narratives: Array<string> = [""]
    for (let i = 1; i <= turns; i++) {
      yield* service.addMessages("c", turn(i))
      yield* service.awaitIdle("c")
      const state = yield* repository.getSummaryState(c)
      if (narratives[narratives.length - 1] !== state.narrative) narratives.push(state.narrative)
    }
    return narratives
  })

/** A skill that keeps what it reads of the narrative and adds a line per turn it folds. */
const appending: ScriptedSkill.ScriptedSkill.Script = {
  extractFacts: (input) => {
    const lines = input.turns.map((t) => `Line of turn ${t.firstSeq}: the user asked about an order.`)
    return Effect.succeed({ facts: [], narrative: [...summaryParts(input.existingSummary), ...lines].join("\n") })
  }
}

/** What each extract-facts call was given, in order. */
const extractCalls = Effect.map(
  Effect.flatMap(ScriptedSkill.ScriptedSkill, (skill) => skill.calls),
  (calls) => calls.flatMap((call) => (call.skill === "extractFacts" ? [call.input] : []))
)

describe("the narrative fold", () => {
  it.effect("append (the default): a fold reads the latest line again, the earlier ones stay as written, the oldest leave first", () =>
    Effect.gen(function*() {
      const counter = yield* TokenCounter
      const narratives = yield* narrativesOver(60)
      const appendReads = yield* extractCalls
      assert.isAtLeast(appendReads.length, 8)
      assert.strictEqual(narratives.length, appendReads.length + 1)
      for (const [i, input] of appendReads.entries()) {
        const before = narratives[i] ?? ""
        const after = narratives[i + 1] ?? ""
        // The first fold starts from none, the later ones from the narrative's latest lines.
        assert.strictEqual(input.existingSummary._tag, i === 0 ? "None" : "Latest")
        const read = summaryParts(input.existingSummary).join("\n")
        // The fold read the narrative's last line, not the whole of it.
        assert.isTrue(before.endsWith(read))
        assert.strictEqual(read, before.split("\n").filter((l) => l.length > 0).slice(-1).join("\n"))
        // What it wrote follows the newest of the earlier lines, kept as they were written.
        const written = [read, ...input.turns.map((t) => `Line of turn ${t.firstSeq}: the user asked about an order.`)]
          .filter((l) => l.length > 0)
        const lines = after.split("\n")
        assert.deepStrictEqual(lines.slice(-written.length), written)
        const earlier = before.split("\n").slice(0, -1)
        const kept = lines.slice(0, -written.length)
        assert.deepStrictEqual(kept, earlier.slice(earlier.length - kept.length))
        // Within the room both blocks share (no facts here), the heading counted.
        const heading = yield* counter.countMessage({ content: summaryText("") })
        assert.isAtMost(yield* counter.count(after), 300 - heading)
      }
      // Once the room is full, the oldest lines have left.
      assert.notInclude(narratives[narratives.length - 1], "Line of turn 1:")
      assert.include(narratives[narratives.length - 1], "Line of turn")
    }).pipe(Effect.provide(memory("append", appending))))

  it.effect("rewrite: a fold reads the whole narrative again", () =>
    Effect.gen(function*() {
      const narratives = yield* narrativesOver(30)
      const rewriteReads = yield* extractCalls
      assert.isAtLeast(rewriteReads.length, 3)
      assert.deepStrictEqual(
        rewriteReads.map((input) => input.existingSummary._tag),
        rewriteReads.map((_, i) => (i === 0 ? "None" : "Narrative"))
      )
      assert.deepStrictEqual(
        rewriteReads.map((input) => summaryParts(input.existingSummary).join("\n")),
        narratives.slice(0, rewriteReads.length)
      )
    }).pipe(Effect.provide(memory("rewrite", appending))))
})

/** The EXISTING_SUMMARY section of an extract-facts request, as the model read it. */
const summarySection = (request: Fake.RecordedRequest): string => {
  const text = Fake.userTexts(request).join("\n")
  const start = text.indexOf("=== EXISTING_SUMMARY ===")
  const end = text.indexOf("=== END_EXISTING_SUMMARY ===")
  return start < 0 || end < start ? "" : text.slice(start + "=== EXISTING_SUMMARY ===".length, end).trim()
}

/** What the model writes at its `n`th fold: two points, one per line. */
const points = (n: number) => [
  `Fold ${n}: the first point of what was said then.`,
  `Fold ${n}: the second point of what was said then.`
]

describe("the append fold over the OpenAI client", () => {
  it.scoped("the model reads the narrative's last line and the prompt says why; its lines replace that line only", () =>
    Effect.gen(function*() {
      const fake = yield* Fake.FakeOpenAi
      const narratives = yield* narrativesOver(30)
      const folds = (yield* fake.requests).filter(Fake.isStructured)
      assert.isAtLeast(folds.length, 4)
      assert.strictEqual(narratives.length, folds.length + 1)
      const first = folds[0]
      assert.include(
        first === undefined ? "" : Fake.systemText(first) ?? "",
        "or its latest lines (the earlier ones are kept as they are"
      )
      for (const [i, request] of folds.entries()) {
        const n = i + 1
        // The model read the last line written, the second point of the fold before.
        assert.strictEqual(summarySection(request), n === 1 ? "NONE" : points(n - 1)[1])
        // Its two lines replaced that line, after the earlier ones as written.
        const lines = (narratives[n] ?? "").split("\n")
        assert.deepStrictEqual(lines.slice(-2), points(n))
        const earlier = (narratives[n - 1] ?? "").split("\n").slice(0, -1)
        const kept = lines.slice(0, -2)
        assert.deepStrictEqual(kept, earlier.slice(earlier.length - kept.length))
      }
    }).pipe(Effect.provide(
      memoryOver(
        "append",
        Fake.skillLayer((request, n) =>
          Fake.object({ facts: [], remove: [], narrative: points(n).join("\n") })(request, n)
        )
      )
    )))
})

const line = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ,.]{0,40}[a-z.]$/)
/** A name of letters only for each `k`: it tells lines apart without adding a number to them. */
const letters = (k: number): string =>
  (k < 26 ? "" : letters(Math.floor(k / 26) - 1)) + String.fromCharCode(97 + (k % 26))
const day = fc.integer({ min: 1, max: 28 }).map((d) => `2025-03-${String(d).padStart(2, "0")}`)
/** A narrative of lines under date headings, as the skills write them. */
const narrative = fc.array(fc.tuple(day, fc.array(line, { minLength: 1, maxLength: 4 })), { maxLength: 6 }).map(
  (days) => {
    let k = 0
    return days.flatMap(([d, lines]) => [dateHeading(d), ...lines.map((l) => `${l} ${letters(k++)}`)])
  }
)

/** Each line said, with the heading it is under. */
const dated = (lines: ReadonlyArray<string>): Array<readonly [string | undefined, string]> => {
  let heading: string | undefined
  const out: Array<readonly [string | undefined, string]> = []
  for (const l of lines) {
    if (headingDate(l) !== undefined) heading = l
    else out.push([heading, l])
  }
  return out
}

/** No heading without a line under it. */
const noBareHeading = (lines: ReadonlyArray<string>) =>
  lines.every((l, i) =>
    headingDate(l) === undefined || (lines[i + 1] !== undefined && headingDate(lines[i + 1] ?? "") === undefined)
  )

const linesOf = (text: string) => (text.length === 0 ? [] : text.split("\n"))

describe("narrative lines", () => {
  it.effect.prop(
    "split: the latest lines within the tokens asked, under their heading, and the earlier ones before them",
    [narrative, fc.integer({ min: 1, max: 60 })],
    ([lines, maxTokens]) =>
      Effect.gen(function*() {
        const counter = yield* TokenCounter
        const parts = yield* NarrativeLines.split(counter, lines.join("\n"), maxTokens)
        const latest = linesOf(parts.latest)
        assert.deepStrictEqual([...dated(parts.earlier), ...dated(latest)], dated(lines))
        assert.isTrue(noBareHeading(parts.earlier) && noBareHeading(latest))
        assert.strictEqual(latest.length === 0, lines.length === 0)
        // Within the tokens asked, unless one line alone is more.
        const said = dated(latest).map(([, l]) => l)
        if (said.length > 1) {
          const tokens = yield* Effect.forEach(said, (l) => Effect.map(counter.count(l), (n) => n + 1))
          assert.isAtMost(tokens.reduce((a, b) => a + b, 0), maxTokens)
        }
      }).pipe(Effect.provide(ApproximateTokenCounter.layer))
  )

  it.effect.prop(
    "join: what was written, whole, after the earlier lines that fit, each under its heading, the plain older ones leaving first",
    [narrative, narrative, fc.integer({ min: 0, max: 200 })],
    ([earlier, written, extra]) =>
      Effect.gen(function*() {
        const counter = yield* TokenCounter
        const maxTokens = (yield* counter.count(written.join("\n"))) + extra
        const joined = linesOf(yield* NarrativeLines.join(counter, earlier, written.join("\n"), maxTokens))
        assert.isAtMost(yield* counter.count(joined.join("\n")), maxTokens)
        assert.isTrue(noBareHeading(joined))
        const all = dated(joined)
        const fresh = dated(written)
        assert.deepStrictEqual(all.slice(all.length - fresh.length), fresh)
        // The earlier lines kept are some of them, in order, each under the heading it had.
        const before = dated(earlier)
        const kept = all.slice(0, all.length - fresh.length)
        const at = kept.map(([heading, l]) => before.findIndex(([h, b]) => b === l && h === heading))
        assert.isTrue(at.every((i, n) => i >= 0 && (n === 0 || i > (at[n - 1] ?? -1))))
        // Those gone are the first of the order lines leave in: the older half's lines with no
        // number, oldest first, then the others, oldest first.
        const older = before.slice(0, Math.floor(before.length / 2)).map((_, i) => i)
        const plain = older.filter((i) => !/\d/.test(before[i]?.[1] ?? ""))
        const order = [...plain, ...before.map((_, i) => i).filter((i) => !plain.includes(i))]
        const gone = new Set(before.map((_, i) => i).filter((i) => !at.includes(i)))
        assert.deepStrictEqual(new Set(order.slice(0, gone.size)), gone)
      }).pipe(Effect.provide(ApproximateTokenCounter.layer))
  )

  it.effect("within: a line with a number outlasts the plain lines of the older half, then the oldest leave first", () =>
    Effect.gen(function*() {
      const counter = yield* TokenCounter
      const lines = ["[2025-03-01]", "Order ORD-1 placed.", "We chatted.", "Then more.", "[2025-03-02]", "A third."]
      // 20 tokens whole (approximately a quarter of the characters).
      assert.deepStrictEqual(yield* NarrativeLines.within(counter, lines, 20), lines)
      assert.deepStrictEqual(yield* NarrativeLines.within(counter, lines, 17), [
        "[2025-03-01]",
        "Order ORD-1 placed.",
        "Then more.",
        "[2025-03-02]",
        "A third."
      ])
      assert.deepStrictEqual(yield* NarrativeLines.within(counter, lines, 16), [
        "[2025-03-01]",
        "Then more.",
        "[2025-03-02]",
        "A third."
      ])
      assert.deepStrictEqual(yield* NarrativeLines.within(counter, lines, 6), ["[2025-03-02]", "A third."])
      assert.deepStrictEqual(yield* NarrativeLines.within(counter, lines, 2), [])
    }).pipe(Effect.provide(ApproximateTokenCounter.layer)))
})
