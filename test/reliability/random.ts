/**
 * Deterministic randomness for seeded tests: a small PRNG (mulberry32) and a stateless draw keyed
 * by (seed, label, n), so that a decision does not depend on how many other draws came before it.
 */

/** A stream of numbers in [0, 1) fixed by `seed`. */
export interface Random {
  readonly next: () => number
  /** An integer in [min, max]. */
  readonly int: (min: number, max: number) => number
  /** True with probability `p`. */
  readonly chance: (p: number) => boolean
  readonly pick: <A>(values: ReadonlyArray<A>) => A
}

const mulberry32 = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** FNV-1a of a string. */
const hashString = (s: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return h >>> 0
}

/** A PRNG seeded with `seed`. */
export const random = (seed: number): Random => {
  const next = mulberry32(seed)
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (values) => {
      const value = values[Math.floor(next() * values.length)]
      if (value === undefined) throw new Error("pick from an empty list")
      return value
    }
  }
}

/** A number in [0, 1) fixed by (seed, label, n). */
export const draw = (seed: number, label: string, n: number): number =>
  mulberry32(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ hashString(label) ^ Math.imul(n, 0xc2b2ae35))()
