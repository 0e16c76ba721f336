/**
 * How many turns fit a budget, shared by the context's window and the summarizer's plan.
 */
import type { Turn } from "../../domain/Turn.js"

/** The number of newest turns that fit `available` tokens together (a contiguous suffix). */
export const newestThatFit = (turns: ReadonlyArray<Turn>, available: number): number => {
  let used = 0
  let count = 0
  for (let i = turns.length - 1; i >= 0; i--) {
    used += turns[i]?.tokenCount ?? 0
    if (used > available) break
    count += 1
  }
  return count
}
