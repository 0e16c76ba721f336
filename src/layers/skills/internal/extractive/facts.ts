/**
 * Offline facts: one per salient value, keyed by the words said around it (`freight charge
 * $1,240.00` → `freight_charge`), its value the span as written (so its source messages are found
 * by the memory), and the user's goals, conditions and decisions as short clauses. An identifier
 * is an entity of its own (two tickets are two facts); any other value under a key replaces the
 * previous one (the latest wins). Ordered by importance, then recency: a cap that keeps the last
 * facts drops general notes before identifiers, amounts, decisions and conditions.
 */
import type { Fact, FactCategory } from "../../../../domain/Fact.js"
import { type Kind, normalize, type Span, spans, weight } from "./salient.js"
import type { Statement } from "./statements.js"
import { calendarWords, functionWords, keyNoise } from "./words.js"

/** Words that say nothing of what a value is. */
const stopwords = new Set([...functionWords, ...calendarWords, ...keyNoise])

/** Words that read as verbs by their ending: they say what happened, not what the value is. */
const verbLike = /^(?:\p{L}{3,}(?:ed|ing))$/u

const suffix: Partial<Record<Kind, string>> = {
  date: "date",
  time: "time",
  phone: "phone",
  email: "email"
}

/** Words of `text` that may name a value: letters, lower case, no stopwords. */
const contentWords = (text: string): Array<string> =>
  text.toLowerCase().replace(/[^\p{L}\p{N}\s'-]/gu, " ").split(/\s+/)
    .map((w) => w.replace(/^['-]+|['-]+$/g, ""))
    // "check-in" is one word, "we'll" a stopword.
    .map((w) => w.replace(/['-]/g, ""))
    .filter((w) => w.length > 2 && !stopwords.has(w) && !verbLike.test(w) && /^\p{L}+$/u.test(w))

const snake = (words: ReadonlyArray<string>): string =>
  words.join("_").replace(/[^a-z0-9_]+/g, "").replace(/_+/g, "_").replace(/^_|_$/g, "").slice(0, 48)

/** The clause a span sits in: from the last clause break before it to the next after it. */
const clauseBefore = (text: string, span: Span): string => {
  const before = text.slice(0, span.index)
  const start = Math.max(...[",", ";", ":", "(", " - ", " — ", ". "].map((b) => before.lastIndexOf(b)), -1)
  return before.slice(start + 1)
}

/** The key of a span: up to three content words said just before it (or after it), named by kind. */
const keyOf = (statement: Statement, span: Span): string => {
  const words = statement.field !== undefined
    ? contentWords(statement.field)
    : contentWords(clauseBefore(statement.text, span)).slice(-2)
  const after = words.length > 0
    ? []
    : contentWords(statement.text.slice(span.index + span.text.length).split(/[,;.:]/)[0] ?? "").slice(0, 2)
  const named = [...words, ...after]
  const kind = suffix[span.kind]
  const withKind = kind === undefined || named.includes(kind) ? named : [...named, kind]
  const key = snake(withKind)
  return key.length > 0 ? key : span.kind
}

const categoryOf: Record<Kind, FactCategory> = {
  identifier: "ENTITY",
  code: "ENTITY",
  address: "ENTITY",
  email: "ENTITY",
  phone: "ENTITY",
  name: "ENTITY",
  money: "NUMERIC",
  quantity: "NUMERIC",
  date: "STATE",
  time: "STATE"
}

/** A key that only says the kind of its value ("money", "date_3"): no word said what the value is. */
const unnamed = /^(?:email|phone|money|identifier|code|address|date|time|quantity|name)(?:_\d+)?$/

/**
 * How much a fact is worth keeping, by what its value is. A value no word named is a general note,
 * whatever its kind: nobody can tell what an amount of its own is for.
 */
const importance = (fact: Fact): number => {
  if (fact.category === "DECISION" || fact.category === "CONDITION") return 4
  const first = spans(fact.value)[0]
  if (first === undefined || (first.kind !== "identifier" && unnamed.test(fact.key))) return 1
  return first.text.length < fact.value.length - 12 ? 2 : weight[first.kind]
}

/** The most words of a goal, condition or decision kept as a fact's value. */
const clauseWords = 18

/** A goal, condition or decision as a short clause of the statement, as written. */
const clauseOf = (text: string): string => {
  const words = text.split(/\s+/)
  return words.length <= clauseWords ? text : words.slice(0, clauseWords).join(" ")
}

interface Candidate {
  readonly key: string
  /** The kind of its value: a goal, condition or decision is a clause. */
  readonly kind: Kind | "clause"
  readonly value: string
  readonly category: FactCategory
  /** Whether the value is an entity of its own (an identifier, a name): never replaced by another value. */
  readonly entity: boolean
}

/** A word that bounds a time or an amount ("before 11:00 a.m.", "by May 30"): part of its value. */
const bound = /\b(?:before|after|by|until|from|within|under|over|at least|at most|no later than|no earlier than)\s+$/i

/** The value of a span: as written, with the word that bounds it. */
const valueOf = (statement: Statement, span: Span): string => {
  if (
    span.kind === "identifier" || span.kind === "code" || span.kind === "name" || span.kind === "email" ||
    span.kind === "phone"
  ) {
    return span.text
  }
  const before = bound.exec(statement.text.slice(Math.max(0, span.index - 24), span.index))
  return before === null ? span.text : `${before[0]}${span.text}`
}

const candidatesOf = (statement: Statement): Array<Candidate> => {
  const out: Array<Candidate> = []
  // A tool's result is a record: what matters of it, the conversation states (and is kept from there).
  if (statement.field !== undefined) return out
  for (const span of statement.spans) {
    const key = keyOf(statement, span)
    out.push({
      key,
      kind: span.kind,
      value: valueOf(statement, span),
      category: categoryOf[span.kind],
      // An identifier or a name is a thing of its own (two tickets, two people); so is any value
      // no word names (its key only says its kind: two dates said bare are not one date changing).
      entity: span.kind === "identifier" || span.kind === "name" || key === span.kind
    })
  }
  if (statement.intent !== "none" && statement.speaker === "User") {
    const words = contentWords(statement.text).slice(0, 3)
    out.push({
      key: snake([statement.intent === "goal" ? "user_goal" : statement.intent, ...words]),
      kind: "clause",
      value: clauseOf(statement.text),
      category: statement.intent === "goal" ? "DECISION" : statement.intent === "condition" ? "CONDITION" : "DECISION",
      entity: false
    })
  }
  return out
}

/** A record's field that names nothing by itself. */
const bareFields = new Set(["value", "id", "name", "text", "code", "ref", "reference", "number", "status", "type"])

/**
 * The names tools' records give identifiers and contacts: the field that holds each ("ticket id"
 * for `"ticketId": "SR-10477"`), when it says more than "id" or "value".
 */
const recordNames = (statements: ReadonlyArray<Statement>): Map<string, string> => {
  const names = new Map<string, string>()
  for (const statement of statements) {
    if (statement.field === undefined || bareFields.has(statement.field)) continue
    const key = snake(statement.field.split(" "))
    for (const span of statement.spans) {
      if (key.length > 0 && (span.kind === "identifier" || span.kind === "email" || span.kind === "phone")) {
        names.set(normalize(span.text), key)
      }
    }
  }
  return names
}

/**
 * Merges the facts of the new statements into the known ones: the latest value of a key wins,
 * an identifier is a fact of its own, a value is held by one fact only (its latest key). Ordered
 * by importance, then by when the fact was last said.
 */
export const mergeFacts = (existing: ReadonlyArray<Fact>, statements: ReadonlyArray<Statement>): Array<Fact> => {
  // Insertion order is recency: a fact said again moves to the end.
  const facts = new Map<string, Fact>(existing.map((fact) => [fact.key, fact]))
  const keyOfValue = new Map<string, string>(existing.map((fact) => [normalize(fact.value), fact.key]))
  const put = (fact: Fact) => {
    const value = normalize(fact.value)
    const holder = keyOfValue.get(value)
    if (holder !== undefined) facts.delete(holder)
    const previous = facts.get(fact.key)
    if (previous !== undefined) keyOfValue.delete(normalize(previous.value))
    facts.delete(fact.key)
    facts.set(fact.key, fact)
    keyOfValue.set(value, fact.key)
  }
  const named = recordNames(statements)
  for (const statement of statements) {
    for (const candidate of candidatesOf(statement)) {
      // An identifier or a contact a tool's record names ("claimId": "DMG-2207") takes that name.
      let key = candidate.entity ? named.get(normalize(candidate.value)) ?? candidate.key : candidate.key
      const held = facts.get(key)
      const heldKind = held === undefined ? undefined : spans(held.value)[0]?.kind
      if (held !== undefined && heldKind !== candidate.kind) {
        // Another kind of value under the same words (an order's number and its address): both stay.
        key = `${key}_${candidate.kind}`
      }
      const current = facts.get(key)
      if (candidate.entity && current !== undefined && normalize(current.value) !== normalize(candidate.value)) {
        // Another entity under the same words: a key of its own, unless the value is known already.
        const known = keyOfValue.get(normalize(candidate.value))
        const base = key
        let n = 2
        key = known ?? `${base}_${n}`
        while (known === undefined && facts.has(key)) key = `${base}_${++n}`
      }
      put({ key, value: candidate.value, category: candidate.category })
    }
  }
  // Importance first, recency next: the newest half of the facts gains up to two points, so that a
  // cap keeping the last facts drops old general notes first and the newest values stay.
  const ordered = [...facts.values()]
  const rank = (fact: Fact, recency: number) => importance(fact) + 2 * (recency / Math.max(1, ordered.length))
  return ordered
    .map((fact, recency) => ({ fact, score: rank(fact, recency), recency }))
    .sort((a, b) => a.score - b.score || a.recency - b.recency)
    .map(({ fact }) => fact)
}
