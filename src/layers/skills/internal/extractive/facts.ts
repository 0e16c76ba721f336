/**
 * Offline facts: one per salient value, keyed by the words said around it (`freight charge
 * $1,240.00` → `freight_charge`). The value is the span as written, so the memory finds its
 * source messages. Goals, conditions and decisions are clauses quoted word for word. An identifier
 * or a name is an entity of its own: two tickets are two facts. Any other value replaces the one
 * under its key. A value said to be cancelled or corrected leaves. Facts are ordered by importance,
 * then by when each was last said, each kind's share kept first (`eviction.ts`). A cap that keeps
 * the last facts drops general notes first, and never a kind's last fact for another kind's.
 */
import { type Fact, type FactCategory } from "../../../../domain/Fact.js"
import { MaxSourceSeqs } from "../../../../domain/internal/facts.js"
import { evictionOrder, goalKey } from "./eviction.js"
import { type Kind, normalize, type Span, spans, weight } from "./salient.js"
import { clausesOf, condition, type Statement } from "./statements.js"
import { calendarWords, functionWords, keyNoise } from "./words.js"

/** Words that say nothing of what a value is. */
const stopwords = new Set([...functionWords, ...calendarWords, ...keyNoise])

/** Words that read as verbs by their ending: they say what happened, not what a value is. */
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

/**
 * What an amount measures, when the words around it say. A total is not its part, nor a yearly
 * amount the monthly one (`$1,850 a month`, `$22,200 for the year`).
 */
const measures: ReadonlyArray<readonly [string, RegExp]> = [
  ["total", /\b(?:in total|total|altogether|combined|overall|in all|all in|all told)\b/i],
  ["yearly", /\b(?:(?:a|per|each|every|for the) year|annual(?:ly)?|yearly)\b/i],
  ["monthly", /\b(?:(?:a|per|each|every) month|monthly)\b/i],
  ["weekly", /\b(?:(?:a|per|each|every) week|weekly)\b/i],
  ["nightly", /\b(?:(?:a|per|each|every) night|nightly)\b/i],
  ["daily", /\b(?:(?:a|per|each|every) day|daily)\b/i],
  ["hourly", /\b(?:(?:an|per|each|every) hour|hourly)\b/i],
  ["per_person", /\b(?:(?:a|per|each) (?:person|head|guest)|apiece)\b/i]
]

/** The measure of an amount: from the words just after it, else from the clause before it. */
const measureOf = (statement: Statement, span: Span): string | undefined => {
  const after = statement.text.slice(span.index + span.text.length).split(/[,;.:]/)[0] ?? ""
  const near = after.split(/\s+/).slice(0, 5).join(" ")
  const before = clauseBefore(statement.text, span)
  for (const [name, pattern] of measures) if (pattern.test(near)) return name
  for (const [name, pattern] of measures) if (pattern.test(before)) return name
  return undefined
}

/** The most words a key takes from before its value. An entity's key names it whole. */
const keyWords = (kind: Kind): number => (kind === "identifier" || kind === "code" ? 3 : 2)

/** The key of a span: the content words just before it (or after it), plus its kind and measure. */
const keyOf = (statement: Statement, span: Span): string => {
  const words = statement.field !== undefined
    ? contentWords(statement.field)
    : contentWords(clauseBefore(statement.text, span)).slice(-keyWords(span.kind))
  const after = words.length > 0
    ? []
    : contentWords(statement.text.slice(span.index + span.text.length).split(/[,;.:]/)[0] ?? "").slice(0, 2)
  const named = [...words, ...after]
  const kind = suffix[span.kind]
  const withKind = kind === undefined || named.includes(kind) ? named : [...named, kind]
  const measure = span.kind === "money" || span.kind === "quantity" ? measureOf(statement, span) : undefined
  const measured = measure === undefined || withKind.includes(measure) ? withKind : [...withKind, measure]
  const key = snake(measured)
  return key.length > 0 ? key : span.kind
}

/**
 * A word that tells this entity from another under the same key. It is the nearest content word
 * before the key's words, else the first after the value ("the work order for the dishwasher").
 */
const qualifierOf = (statement: Statement, span: Span, key: string): string | undefined => {
  const used = new Set(key.split("_"))
  const fresh = (words: ReadonlyArray<string>) => words.filter((w) => !used.has(w))
  const before = fresh(contentWords(statement.text.slice(0, span.index)))
  const after = fresh(contentWords(statement.text.slice(span.index + span.text.length)))
  return before.at(-1) ?? after[0]
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

/** A key that only names its value's kind ("money", "date_3"). */
const unnamed = /^(?:email|phone|money|identifier|code|address|date|time|quantity|name)(?:_\d+)?$/

/**
 * How much a fact is worth keeping, by its value. A value no word names is a general note,
 * whatever its kind: a bare amount says nothing of what it is for.
 */
const importance = (fact: Fact): number => {
  if (fact.category === "DECISION" || fact.category === "CONDITION") return 4
  const first = spans(fact.value)[0]
  if (first === undefined || (first.kind !== "identifier" && unnamed.test(fact.key))) return 1
  return first.text.length < fact.value.length - 12 ? 2 : weight[first.kind]
}

/** The most words of a goal or decision kept as a fact's value. */
const clauseWords = 12

/** A goal or decision as a short clause of the statement, as written. */
const clauseOf = (text: string): string => {
  const words = text.split(/\s+/)
  return words.length <= clauseWords ? text : words.slice(0, clauseWords).join(" ")
}

/**
 * A condition word for word: the clause that states it ("as long as the lease is signed").
 * A clause too short to stand alone takes the one before it.
 */
const conditionOf = (text: string): string => {
  const clauses = clausesOf(text)
  const at = clauses.findIndex((clause) => condition.test(clause))
  if (at < 0) return clauseOf(text)
  const own = clauses[at] ?? text
  const whole = own.split(/\s+/).length < 5 && at > 0 ? `${clauses[at - 1] ?? ""} ${own}` : own
  return whole.trim().replace(/[.,;:!]+$/, "")
}

interface Candidate {
  readonly key: string
  /** The kind of its value: a goal, condition or decision is a clause. */
  readonly kind: Kind | "clause"
  readonly value: string
  readonly category: FactCategory
  /** Whether the value is an entity of its own, never replaced by another value. */
  readonly entity: boolean
  /** Its span, to tell it from another entity under the same words. */
  readonly span?: Span | undefined
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

/**
 * Words just before a value that say it no longer holds: "cancelled order", "instead of", "rather
 * than". A bare "not" is not enough: "not before 11:00" bounds a time.
 */
const voidedBefore =
  /(?:\b(?:instead of|rather than|in place of|no longer)\s+(?:the |a |an |our |my |your )?|\b(?:cancel(?:l?ed|s|l?ing)?|void(?:ed)?|withdr[ae]wn?|scrapp?(?:ed)?)\s+(?:[\p{L}#-]+\s+){0,2})$/iu

/** Words just after a value that say it no longer holds: "was a typo", "has been cancelled". */
const voidedAfter =
  /^\W{0,3}(?:\p{L}+\s+){0,2}?(?:is|was|has been|have been|were|got|is now|are now)\s+(?:now\s+)?(?:cancel(?:l?ed)|void(?:ed)?|wrong|incorrect|a typo|withdrawn|replaced|superseded|obsolete|no longer valid)\b/iu

/** The values a statement says no longer hold: cancelled, or corrected by another. */
const voidedIn = (statement: Statement): ReadonlySet<string> => {
  const voided = new Set<string>()
  if (statement.field !== undefined) return voided
  for (const span of statement.spans) {
    const before = statement.text.slice(Math.max(0, span.index - 40), span.index)
    const after = statement.text.slice(span.index + span.text.length, span.index + span.text.length + 40)
    if (voidedBefore.test(before) || voidedAfter.test(after)) voided.add(normalize(span.text))
  }
  return voided
}

/** A record's field that names nothing by itself. */
const bareFields = new Set(["value", "id", "name", "text", "code", "ref", "reference", "number", "status", "type"])

const candidatesOf = (statement: Statement): Array<Candidate> => {
  const out: Array<Candidate> = []
  // A tool's result is a record: the conversation states what matters of it, and facts come from there.
  if (statement.field !== undefined) return out
  for (const span of statement.spans) {
    const key = keyOf(statement, span)
    out.push({
      key,
      kind: span.kind,
      value: valueOf(statement, span),
      category: categoryOf[span.kind],
      // An identifier, a code or a name is a thing of its own. So is a value no word names:
      // two bare dates are not one date changing.
      entity: span.kind === "identifier" || span.kind === "code" || span.kind === "name" || key === span.kind,
      span
    })
  }
  const user = statement.speaker === "User"
  // Goals, conditions and decisions the user states. From others, only a condition that holds a
  // value ("signed by June 30"), not every "must" of a reply.
  const value = statement.intent === "condition" ? conditionOf(statement.text) : clauseOf(statement.text)
  if (statement.intent !== "none" && (user || (statement.intent === "condition" && spans(value).length > 0))) {
    const words = contentWords(value).slice(0, 3)
    out.push({
      key: snake([statement.intent === "goal" ? goalKey : statement.intent, ...words]),
      kind: "clause",
      value,
      category: statement.intent === "goal" ? "DECISION" : statement.intent === "condition" ? "CONDITION" : "DECISION",
      entity: false
    })
  }
  return out
}

/**
 * The names tools' records give identifiers and contacts: the field that holds each
 * (`"ticketId": "SR-10477"`), when it says more than "id" or "value".
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

/** The newest seq a fact was said in; -1 when it does not say. */
const lastSaid = (fact: Fact): number => Math.max(-1, ...(fact.sourceSeqs ?? []))

/** `seqs` with `seq` as the newest, each once, at most `MaxSourceSeqs`. */
const saidAgain = (seqs: ReadonlyArray<number> | undefined, seq: number | undefined): Array<number> | undefined => {
  if (seq === undefined) return seqs === undefined ? undefined : [...seqs]
  return [...(seqs ?? []).filter((s) => s !== seq), seq].slice(-MaxSourceSeqs)
}

/**
 * Merges the new statements' facts into the known ones. The latest value of a key wins. An
 * identifier or a name is a fact of its own. A value is held by one fact only, its latest key.
 * A value said to be cancelled or corrected leaves. The order is for the cap (`evictionOrder`):
 * by importance, then by when each was last said.
 */
export const mergeFacts = (existing: ReadonlyArray<Fact>, statements: ReadonlyArray<Statement>): Array<Fact> => {
  // Insertion order is recency among facts that do not say when they were said.
  const facts = new Map<string, Fact>(existing.map((fact) => [fact.key, fact]))
  const keyOfValue = new Map<string, string>(existing.map((fact) => [normalize(fact.value), fact.key]))
  const drop = (value: string) => {
    const holder = keyOfValue.get(value)
    if (holder !== undefined) facts.delete(holder)
    keyOfValue.delete(value)
  }
  const put = (fact: Fact) => {
    const value = normalize(fact.value)
    drop(value)
    const previous = facts.get(fact.key)
    if (previous !== undefined) keyOfValue.delete(normalize(previous.value))
    facts.delete(fact.key)
    facts.set(fact.key, fact)
    keyOfValue.set(value, fact.key)
  }
  const named = recordNames(statements)
  for (const statement of statements) {
    // A cancelled or corrected value leaves the facts; its messages stay searchable.
    const voided = voidedIn(statement)
    for (const value of voided) drop(value)
    for (const candidate of candidatesOf(statement)) {
      if (candidate.span !== undefined && voided.has(normalize(candidate.span.text))) continue
      // An identifier or a contact a tool's record names takes that name.
      let key = candidate.entity ? named.get(normalize(candidate.value)) ?? candidate.key : candidate.key
      const held = facts.get(key)
      const heldKind = held === undefined ? undefined : spans(held.value)[0]?.kind
      if (held !== undefined && heldKind !== candidate.kind) {
        // Another kind of value under the same words: both stay.
        key = `${key}_${candidate.kind}`
      }
      const current = facts.get(key)
      const known = keyOfValue.get(normalize(candidate.value))
      if (candidate.entity && current !== undefined && normalize(current.value) !== normalize(candidate.value)) {
        // Another entity under the same words: the value's own key, else one that names it
        // apart ("dishwasher_work_order"), else a number.
        const qualifier = candidate.span === undefined || unnamed.test(key)
          ? undefined
          : qualifierOf(statement, candidate.span, key)
        const base = qualifier === undefined ? key : snake([qualifier, key])
        let n = 2
        key = known ?? (facts.has(base) ? `${base}_${n}` : base)
        while (known === undefined && facts.has(key)) key = `${base}_${++n}`
      }
      // A value said again keeps its mentions, this one the newest.
      const prior = known === undefined ? undefined : facts.get(known)
      put({
        key,
        value: candidate.value,
        category: candidate.category,
        ...withSeqs(saidAgain(prior?.sourceSeqs, statement.seq))
      })
    }
  }
  // Recency adds up to two points to importance, so old general notes go first.
  // Each kind keeps its share of a full cap.
  const byRecency = [...facts.values()]
    .map((fact, position) => ({ fact, position }))
    .sort((a, b) => lastSaid(a.fact) - lastSaid(b.fact) || a.position - b.position)
  const worth = (fact: Fact, recency: number) => importance(fact) + 2 * (recency / Math.max(1, byRecency.length))
  return evictionOrder(byRecency.map(({ fact }, recency) => ({ fact, worth: worth(fact, recency) + recency * 1e-9 })))
}

const withSeqs = (seqs: ReadonlyArray<number> | undefined): { readonly sourceSeqs?: ReadonlyArray<number> } =>
  seqs === undefined || seqs.length === 0 ? {} : { sourceSeqs: seqs }
