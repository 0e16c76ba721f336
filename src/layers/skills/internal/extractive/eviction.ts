/**
 * Which offline facts a full cap keeps: each kind of value (identifiers, amounts, dates, names,
 * conditions and decisions, goals) holds a share of the cap, and within a kind the fact said most
 * recently stays longest. The facts come out in the order a cap drops them (the first to go
 * first), so that keeping the last `n` keeps every kind's share of `n`, whatever `n` is.
 */
import type { Fact } from "../../../../domain/Fact.js"
import { spans } from "./salient.js"

/** What a fact holds, as its share of the cap counts it. */
export type FactKind = "identifier" | "amount" | "date" | "name" | "condition" | "goal" | "other"

/**
 * The share of a full cap each kind is sure to keep (if it has that many facts): two fifths of the
 * cap in all. The rest goes to the facts worth most, whatever their kind.
 */
export const shares: Record<FactKind, number> = {
  identifier: 0.08,
  amount: 0.08,
  date: 0.07,
  name: 0.07,
  condition: 0.06,
  goal: 0.04,
  other: 0
}

/** The prefix of the key of a user's goal. */
export const goalKey = "user_goal"

/** The kind of a fact: by its category for a clause, else by the first value it holds. */
export const kindOf = (fact: Fact): FactKind => {
  if (fact.key.startsWith(goalKey)) return "goal"
  if (fact.category === "DECISION" || fact.category === "CONDITION") return "condition"
  switch (spans(fact.value)[0]?.kind) {
    case "identifier":
    case "code":
      return "identifier"
    case "money":
    case "quantity":
      return "amount"
    case "date":
    case "time":
      return "date"
    case "name":
    case "address":
    case "email":
    case "phone":
      return "name"
    default:
      return "other"
  }
}

/** A fact with what eviction weighs: its kind, and how much it is worth. */
export interface Ranked {
  readonly fact: Fact
  readonly kind: FactKind
  /** Higher stays longer: what the value is, then the recency of its last mention. */
  readonly worth: number
}

/**
 * The facts in the order a cap drops them. The order to keep them is built one fact at a time:
 * the best of a kind below its share of what is kept so far, else the best of all. Every prefix
 * of that order holds each kind's share (or all of a kind that has fewer), and the rest by worth.
 * The result is that order reversed.
 */
export const evictionOrder = (ranked: ReadonlyArray<Ranked>): Array<Fact> => {
  const best = [...ranked].sort((a, b) => b.worth - a.worth)
  const taken = new Map<FactKind, number>()
  const left = new Map<FactKind, number>()
  for (const item of ranked) left.set(item.kind, (left.get(item.kind) ?? 0) + 1)
  const kept = new Set<Ranked>()
  const keep: Array<Fact> = []
  while (keep.length < best.length) {
    const size = keep.length + 1
    let short: FactKind | undefined
    let deficit = 0
    for (const [kind, count] of left) {
      const owed = shares[kind] * size - (taken.get(kind) ?? 0)
      if (count > 0 && owed >= 0.5 && owed > deficit) {
        short = kind
        deficit = owed
      }
    }
    const next = best.find((item) => !kept.has(item) && (short === undefined || item.kind === short))
    if (next === undefined) break
    kept.add(next)
    taken.set(next.kind, (taken.get(next.kind) ?? 0) + 1)
    left.set(next.kind, (left.get(next.kind) ?? 1) - 1)
    keep.push(next.fact)
  }
  return keep.reverse()
}
