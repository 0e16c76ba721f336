/**
 * What a seed of the fault soak fixes: the strategy and its options, the conversations, the fault
 * rates, and the scripted skill that fails and hangs by call number.
 */
import { Effect, FastCheck as fc, Layer, Ref } from "effect"
import type { Fact } from "../../src/domain/Fact.js"
import { SkillExecutionError } from "../../src/errors/SkillExecutionError.js"
import * as ChatMemory from "../../src/layers/ChatMemory.js"
import { defaultSummary } from "../../src/layers/skills/internal/scripted.js"
import * as ScriptedSkill from "../../src/layers/skills/ScriptedSkill.js"
import * as Store from "../../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../../src/layers/tokens/ApproximateTokenCounter.js"
import type { SkillService } from "../../src/services/SkillService.js"
import * as HierarchicalStrategy from "../../src/strategies/HierarchicalStrategy.js"
import * as SummarizationStrategy from "../../src/strategies/SummarizationStrategy.js"
import { conversation, type ConversationSpec } from "../fixtures/arbitraries.js"
import { draw, random } from "./random.js"
import type { CheckSettings } from "./soakChecks.js"

export const variants = ["incremental", "full", "layered", "hierarchical"] as const

export type Variant = typeof variants[number]

/** The variant a seed exercises. */
export const variantOf = (seed: number): Variant => variants[seed % variants.length] ?? "incremental"

export interface SoakConfig {
  readonly seed: number
  readonly variant: Variant
  readonly options: Partial<HierarchicalStrategy.HierarchicalOptions>
  readonly settings: CheckSettings
  readonly conversations: ReadonlyArray<ConversationSpec>
  /** Probabilities: per store call, per skill call, and per step. */
  readonly rates: {
    readonly store: number
    readonly skillFail: number
    readonly skillHang: number
    readonly shutdown: number
    readonly interrupt: number
    readonly clear: number
    readonly batch: number
  }
}

export const configFor = (seed: number): SoakConfig => {
  const r = random(seed)
  const variant = variantOf(seed)
  const budget = r.int(75, 750)
  const k = r.int(1, 4)
  const threshold = Math.floor(budget * (1 + 1.5 * r.next()))
  const summaryTokenCap = Math.max(10, Math.floor(budget / 5))
  const triggerAt = r.int(6, 40)
  const messageTrigger = r.chance(0.2) ? { threshold: triggerAt, target: r.int(0, triggerAt - 1) } : undefined
  const prune = variant !== "full" && r.chance(0.25)
  const summaryMessages = r.chance(0.25)
  const options: Partial<HierarchicalStrategy.HierarchicalOptions> = {
    kRawTurns: k,
    tokenBudget: budget,
    chunkSummarizeThreshold: threshold,
    summaryTokenCap,
    mode: variant === "hierarchical" ? "incremental" : variant,
    retries: r.int(0, 2),
    retryBaseDelay: r.int(0, 500),
    skillTimeout: r.int(100, 5000),
    lazyFallback: r.chance(0.25) ? "sync" : "window",
    pruneSummarized: prune,
    summaryMessages,
    summarizerInputLimit: r.chance(0.3) ? r.int(Math.floor(budget / 2), budget * 2) : 8000,
    ...(messageTrigger === undefined ? {} : { messageTrigger }),
    ...(variant === "hierarchical" ? { maxFacts: r.int(1, 8) } : {})
  }
  const count = r.int(1, 3)
  const conversations = Array.from(
    { length: count },
    (_, i) =>
      fc.sample(conversation({ minTurns: 4, maxTurns: 20 }), { seed: seed * 31 + i, numRuns: 1 })[0] ?? {
        system: [],
        turns: []
      }
  )
  return {
    seed,
    variant,
    options,
    settings: { budget, k, mode: variant, threshold, messageTrigger, prune, summaryMessages },
    conversations,
    rates: {
      store: r.chance(0.2) ? 0 : 0.25 * r.next(),
      skillFail: 0.3 * r.next(),
      skillHang: 0.15 * r.next(),
      shutdown: 0.08 * r.next(),
      interrupt: 0.06 * r.next(),
      clear: 0.02 * r.next(),
      batch: 0.25 * r.next()
    }
  }
}

const skillError = (retryable: boolean) =>
  new SkillExecutionError({
    skillId: "scripted",
    reason: retryable ? "Unavailable" : "MalformedOutput",
    retryable,
    detail: "injected skill fault"
  })

/** What a skill call does: hang, fail, answer blank, answer too long, or answer. */
const outcome = <A>(
  config: SoakConfig,
  seen: SkillFaults,
  label: string,
  n: number,
  answers: { readonly ok: () => A; readonly long: () => A; readonly blank: A }
): Effect.Effect<A, SkillExecutionError> => {
  const x = draw(config.seed, label, n)
  const { skillFail, skillHang } = config.rates
  if (x < skillHang) {
    // A call that never answers: only its timeout (or the layer closing) ends it.
    return Effect.suspend(() => {
      let started = false
      return Effect.sync(() => {
        started = true
        seen.skillHangs += 1
      }).pipe(
        Effect.zipRight(Effect.never),
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            if (started) seen.hangsEnded += 1
          })
        )
      )
    })
  }
  if (x < skillHang + skillFail) {
    const retryable = draw(config.seed, `${label}/retryable`, n) < 0.7
    return Effect.sync(() => {
      seen.skillFailures += 1
    }).pipe(Effect.zipRight(Effect.fail(skillError(retryable))))
  }
  if (x < skillHang + skillFail + 0.03) return Effect.succeed(answers.blank)
  if (x < skillHang + skillFail + 0.15) return Effect.succeed(answers.long())
  return Effect.succeed(answers.ok())
}

const facts = (input: SkillService.ExtractFactsInput, n: number): ReadonlyArray<Fact> => [
  ...input.existingFacts.filter((f) => f.key !== `k${n % 7}` && f.key !== `k${(n + 3) % 5}`),
  { key: `k${n % 7}`, value: `value ${n}`, category: "STATE" }
]

/** Counts of the skill faults injected. */
export interface SkillFaults {
  skillHangs: number
  /** Hung calls that were interrupted (by their timeout, or by the layer closing). */
  hangsEnded: number
  skillFailures: number
}

/**
 * The skill of one layer generation. While `calm` holds, every call answers; otherwise calls hang,
 * fail and answer badly by call number, as the seed says.
 */
export const script = (
  config: SoakConfig,
  generation: number,
  calm: Ref.Ref<boolean>,
  seen: SkillFaults
): ScriptedSkill.ScriptedSkill.Script => ({
  summarize: (input, n) =>
    Effect.flatMap(Ref.get(calm), (quiet) => {
      const ok = () => defaultSummary(input)
      return quiet ? Effect.succeed(ok()) : outcome(config, seen, `summarize/${generation}`, n, {
        ok,
        long: () => `${ok()}\n${"more detail ".repeat(400)}`,
        blank: "  "
      })
    }),
  extractFacts: (input, n) =>
    Effect.flatMap(Ref.get(calm), (quiet) => {
      const ok = () => ({ facts: facts(input, n), narrative: defaultSummary(input) })
      return quiet ? Effect.succeed(ok()) : outcome(config, seen, `extractFacts/${generation}`, n, {
        ok,
        long: () => ({ facts: facts(input, n), narrative: "narrative ".repeat(600) }),
        blank: { facts: [], narrative: " " }
      })
    })
})

/** The memory of one layer generation, over the (faulty) store the test keeps. */
export const memoryLayer = (
  config: SoakConfig,
  store: Store.Store,
  skill: ScriptedSkill.ScriptedSkill.Script
) => {
  const strategy = config.variant === "hierarchical"
    ? HierarchicalStrategy.layer(config.options)
    : SummarizationStrategy.layer(config.options)
  return ChatMemory.layer.pipe(
    Layer.provideMerge(strategy),
    Layer.provideMerge(ScriptedSkill.layer(skill)),
    Layer.provideMerge(ApproximateTokenCounter.layer),
    Layer.provideMerge(Store.layerFrom(store))
  )
}
