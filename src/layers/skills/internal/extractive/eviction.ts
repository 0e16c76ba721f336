/**
 * Which offline facts a full cap keeps. Each kind of value keeps its share of the cap: its
 * `kindFloor` facts worth most. So a run of one kind, like a ledger of amounts, never pushes every
 * name or date out. The rest of the cap goes to the facts worth most, whatever their kind. Facts
 * come out in the order a cap drops them, so keeping the last `n` keeps every kind's share.
 */
import type { Fact } from "../../../../domain/Fact.js"
import { spans } from "./salient.js"

/** What a fact holds, as its share of the cap counts it. */
type FactKind = "identifier" | "amount" | "date" | "name" | "condition" | "goal" | "other"

/** The kinds that keep a share of a full cap, in the order the shares are given out. */
const sharedKinds: ReadonlyArray<FactKind> = ["name", "date", "condition", "goal", "identifier", "amount"]

/** The fewest facts of each kind a full cap keeps, when the kind has that many. */
const kindFloor = 1

/** The prefix of the key of a user's goal. */
export const goalKey = "user_goal"

/** The kind of a fact: by its key or category for a clause, else by its first value. */
const kindOf = (fact: Fact): FactKind => {
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

/**
 * `facts` in the order a cap drops them, the one worth most last. Each kind's share is kept last:
 * the best `kindFloor` of each kind, round by round. Every suffix holds each kind's share, or as
 * much as fits.
 */
export const evictionOrder = (facts: ReadonlyArray<{ readonly fact: Fact; readonly worth: number }>): Array<Fact> => {
  const best = [...facts].sort((a, b) => b.worth - a.worth)
  const byKind = new Map<FactKind, Array<Fact>>()
  for (const { fact } of best) {
    const kind = kindOf(fact)
    const ofKind = byKind.get(kind)
    if (ofKind === undefined) byKind.set(kind, [fact])
    else ofKind.push(fact)
  }
  const keep: Array<Fact> = []
  const taken = new Set<Fact>()
  for (let round = 0; round < kindFloor; round++) {
    for (const kind of sharedKinds) {
      const fact = byKind.get(kind)?.[round]
      if (fact !== undefined) {
        keep.push(fact)
        taken.add(fact)
      }
    }
  }
  for (const { fact } of best) if (!taken.has(fact)) keep.push(fact)
  return keep.reverse()
}
