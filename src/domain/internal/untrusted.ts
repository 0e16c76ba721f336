/**
 * The guarded copy behind `Text.fromUntrusted` and `Text.Json`. Untrusted input is read once,
 * inside a guard, into a fresh canonical plain copy, with a reason for each value it cannot copy.
 */
import { Array as Arr, ParseResult } from "effect"
import { utf8Length } from "./utf8.js"

export interface Limits {
  /** Containers deeper than this are refused. The root container is level 1. */
  readonly maxDepth: number
  readonly maxValues: number
  /** Copy the top-level container only. Its elements are passed on unread. */
  readonly shallow: boolean
  /**
   * Keep object keys in the input's order instead of `jsonb`'s. For JSON whose text must come back
   * byte for byte, such as tool call params and results replayed to a provider.
   */
  readonly keepOrder?: boolean | undefined
}

export interface Copy {
  /** A fresh plain copy: arrays, plain objects and primitives, with sentinels where a problem was. */
  readonly value: unknown
  /** The reason behind each sentinel of `value`. Each problem has a fresh, unforgeable symbol. */
  readonly problems: ReadonlyMap<symbol, string>
  /** The input held more than `maxValues` values: `value` is incomplete. */
  readonly tooLarge: boolean
}

const unreadable = "could not be read: a getter or a proxy trap threw"
const cyclic = "is a cyclic reference (an object that contains itself)"
const tooDeep = (levels: number) => `nests more than ${levels} levels of arrays and objects`
export const tooLarge = (values: number) => `is too large: more than ${values} values`
export const notData = (what: string) => `must be plain JSON data, not ${what}`

const article = (noun: string) => (/^[aeio]/i.test(noun) ? `an ${noun}` : `a ${noun}`)

/** What an object that is not plain data is, for a message: "a Date", "an instance of Point". */
const describeObject = (value: object): string => {
  try {
    const tag = Object.prototype.toString.call(value).slice(8, -1)
    if (tag !== "Object" && tag !== "Array") return article(tag)
    const constructor: unknown = Reflect.get(value, "constructor")
    if (typeof constructor === "function" && constructor !== Object && constructor.name.length > 0) {
      return `an instance of ${constructor.name}`
    }
  } catch {
    // A getter or a trap threw: the generic description will do.
  }
  return "an object with a custom prototype"
}

/**
 * The order `jsonb` keeps object keys in: shorter keys first (in UTF-8 bytes), then byte order.
 * UTF-8 byte order is code point order, which UTF-16 code unit order is not. By code point, a
 * surrogate (U+D800–U+DFFF) sorts after U+E000–U+FFFF.
 */
const codePointRank = (unit: number) => (unit < 0xD800 ? unit : unit >= 0xE000 ? unit - 0x800 : unit + 0x2000)

const compareKeys = (a: readonly [string, number], b: readonly [string, number]): number => {
  if (a[1] !== b[1]) return a[1] - b[1]
  const [x] = a
  const [y] = b
  for (let i = 0; i < x.length && i < y.length; i++) {
    const ux = x.charCodeAt(i)
    const uy = y.charCodeAt(i)
    if (ux !== uy) return codePointRank(ux) - codePointRank(uy)
  }
  return x.length - y.length
}

const sortedKeys = (keys: ReadonlyArray<string>): ReadonlyArray<string> =>
  keys.length < 2 ? keys : keys.map((key) => [key, utf8Length(key)] as const).sort(compareKeys).map(([key]) => key)

/** Sets `key` as own data, even `__proto__`, which plain assignment would take as the prototype. */
export const setOwn = (target: Record<string, unknown>, key: string, value: unknown): void => {
  if (key === "__proto__") {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    target[key] = value
  }
}

/**
 * Reads `input` into a fresh plain copy without ever throwing: every property is read once, inside
 * a guard. What cannot be copied as JSON data becomes a sentinel symbol with a recorded reason.
 * That covers a throwing getter or proxy trap, a cycle, a `Date`, a `Map`, a class instance, a
 * function, a bigint, a container nested too deep. Symbols from the caller are kept, for schemas
 * to refuse.
 *
 * The copy is canonical. Object keys are in `jsonb` order, or the input's with `keepOrder`. `-0`
 * becomes `0`. Properties whose value is `undefined` are left out, as `JSON.stringify` does. In an
 * array, `undefined` stays, for the schema to refuse.
 */
export const copyUntrusted = (input: unknown, limits: Limits): Copy => {
  const problems = new Map<symbol, string>()
  // The objects on the path from the root. A shared object seen twice is fine, a cycle is not.
  const ancestors = new Set<object>()
  let values = 0
  let overflow = false

  const problem = (reason: string): symbol => {
    const sentinel = Symbol(reason)
    problems.set(sentinel, reason)
    return sentinel
  }

  const read = (container: object, key: string | number): unknown => {
    try {
      return Reflect.get(container, key)
    } catch {
      return problem(unreadable)
    }
  }

  const copy = (value: unknown, depth: number): unknown => {
    values += 1
    if (values > limits.maxValues) {
      overflow = true
      return null
    }
    if (typeof value === "number") return Object.is(value, -0) ? 0 : value
    if (typeof value === "bigint") return problem(notData("a bigint"))
    if (typeof value === "function") return problem(notData("a function"))
    if (typeof value !== "object" || value === null) return value
    if (limits.shallow && depth > 0) return value
    if (depth >= limits.maxDepth) return problem(tooDeep(limits.maxDepth))
    try {
      if (ancestors.has(value)) return problem(cyclic)
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype) return problem(notData(describeObject(value)))
        const length: unknown = Reflect.get(value, "length")
        // Only a proxy can report a length that is no array length.
        if (typeof length !== "number" || !Number.isSafeInteger(length) || length < 0) return problem(unreadable)
        ancestors.add(value)
        try {
          const out: Array<unknown> = []
          for (let i = 0; i < length && !overflow; i++) out.push(copy(read(value, i), depth + 1))
          return out
        } finally {
          ancestors.delete(value)
        }
      }
      const prototype: unknown = Object.getPrototypeOf(value)
      if (prototype !== Object.prototype && prototype !== null) return problem(notData(describeObject(value)))
      if (Object.getOwnPropertySymbols(value).some((key) => Object.prototype.propertyIsEnumerable.call(value, key))) {
        return problem(notData("an object with symbol keys"))
      }
      const keys = limits.keepOrder === true ? Object.keys(value) : sortedKeys(Object.keys(value))
      ancestors.add(value)
      try {
        const out: Record<string, unknown> = {}
        for (const key of keys) {
          if (overflow) break
          const item = copy(read(value, key), depth + 1)
          if (item !== undefined) setOwn(out, key, item)
        }
        return out
      } finally {
        ancestors.delete(value)
      }
    } catch {
      return problem(unreadable)
    }
  }

  const value = copy(input, 0)
  return { value, problems, tooLarge: overflow }
}

/**
 * A `message` annotation that keeps the guarded copy's reason for a value it could not read, and
 * says `fallback` otherwise. Without it, a schema with its own message would report a throwing
 * getter as, say, "must be a string".
 */
export const reasonOr = (fallback: string) => (issue: ParseResult.ParseIssue): string =>
  issue._tag === "Type" && issue.message !== undefined ? issue.message : fallback

/**
 * Gives each issue about a sentinel of the copy its recorded reason, instead of "Expected string,
 * actual Symbol(…)". A union's `Composite` issue about a sentinel becomes one such issue too.
 */
export const explain = (
  issue: ParseResult.ParseIssue,
  problems: ReadonlyMap<symbol, string>
): ParseResult.ParseIssue => {
  switch (issue._tag) {
    case "Type":
    case "Composite": {
      const reason = typeof issue.actual === "symbol" ? problems.get(issue.actual) : undefined
      if (reason !== undefined) return new ParseResult.Type(issue.ast, issue.actual, reason)
      if (issue._tag === "Type") return issue
      const issues = "_tag" in issue.issues
        ? explain(issue.issues, problems)
        : Arr.map(issue.issues, (inner) => explain(inner, problems))
      return new ParseResult.Composite(issue.ast, issue.actual, issues, issue.output)
    }
    case "Pointer":
      return new ParseResult.Pointer(issue.path, issue.actual, explain(issue.issue, problems))
    case "Refinement":
      return new ParseResult.Refinement(issue.ast, issue.actual, issue.kind, explain(issue.issue, problems))
    case "Transformation":
      return new ParseResult.Transformation(issue.ast, issue.actual, issue.kind, explain(issue.issue, problems))
    case "Missing":
    case "Unexpected":
    case "Forbidden":
      return issue
  }
}
