/**
 * Generated input for the public methods as callers outside the type system send it: arbitrary
 * values (JSON and beyond), near-valid messages and options with exactly one bad field, whose
 * path the refusal must name, and hostile values (deep, cyclic, getters, proxies, dates, maps,
 * class instances) with the path and reason of their refusal.
 */
import { FastCheck as fc } from "effect"

/** Any value a JavaScript caller or a deserialized request could pass. */
export const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue(),
  fc.anything({
    withBigInt: true,
    withBoxedValues: true,
    withDate: true,
    withMap: true,
    withNullPrototype: true,
    withObjectString: true,
    withSet: true,
    withSparseArray: true,
    withTypedArray: true
  }),
  fc.constantFrom<unknown>(undefined, null, Number.NaN, Infinity, -0, "", "\u0000", "\ud800", [], {}, () => "f")
)

const storable = fc.string({ minLength: 1, maxLength: 40 })

/** Strings with a NUL or an unpaired surrogate: not storable. */
const unstorable = fc.tuple(
  fc.string({ maxLength: 10 }),
  fc.constantFrom("\u0000", "\ud800", "\udfff"),
  fc.string({
    maxLength: 10
  })
).map(([a, bad, b]) => `${a}${bad}${b}`)

/** Conversation ids: valid ones (so that calls also reach the store) and every kind of bad one. */
export const conversationId: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("fuzz-a", "fuzz-b", "fuzz-c") },
  { weight: 1, arbitrary: fc.string({ maxLength: 300 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary-ascii", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ minLength: 256, maxLength: 400 }) },
  { weight: 1, arbitrary: unstorable },
  { weight: 3, arbitrary: anyValue }
)

/** A valid conversation id of the pool. */
export const validId = fc.constantFrom("fuzz-a", "fuzz-b", "fuzz-c")

const toolCall = fc.record({
  id: storable,
  name: storable,
  params: fc.dictionary(fc.constantFrom("q", "n", "flag"), fc.oneof(fc.string(), fc.integer(), fc.boolean()))
})

const earliest = new Date("1000-01-01T00:00:00.000Z")
const epoch = new Date(0)

/** Times between `min` and `max` as ISO 8601 text in UTC, as `createdAt` takes them. */
const isoTime = (min: Date, max: Date) => fc.date({ min, max, noInvalidDate: true }).map((date) => date.toISOString())

/** A message every caller may add. */
export const validMessage: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({ role: fc.constantFrom("system", "user"), content: storable }),
  fc.record({ role: fc.constant("assistant"), content: storable, metadata: fc.record({ modelVariant: storable }) }),
  fc.record({
    role: fc.constant("assistant"),
    content: fc.constantFrom("", "calling tools"),
    metadata: fc.record({ toolCalls: fc.array(toolCall, { minLength: 1, maxLength: 3 }) })
  }),
  fc.record({
    role: fc.constant("tool"),
    content: storable,
    metadata: fc.record({ toolCallId: storable, toolName: storable, isError: fc.boolean() }, {
      requiredKeys: ["toolCallId"]
    })
  }),
  fc.record({
    role: fc.constant("user"),
    content: storable,
    metadata: fc.record({ attributes: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.integer())) })
  }),
  // A time of its own: under the test clock (the epoch), one before it.
  fc.record({ role: fc.constantFrom("user", "assistant"), content: storable, createdAt: isoTime(earliest, epoch) })
)

/**
 * JSON as a host sends it in `attributes` and tool call `params`. (`__proto__` keys are left out:
 * they are refused, as the service's validation tests show.)
 */
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string({ unit: "grapheme", maxLength: 12 }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 8 }).filter((k) => k !== "__proto__"), tie("value"), { maxKeys: 4 })
  )
})).value

/** Valid messages with free-form JSON in their metadata. */
export const jsonMessage: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({
    role: fc.constantFrom("user", "system"),
    content: fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }),
    metadata: fc.record({
      attributes: fc.dictionary(fc.string({ maxLength: 8 }).filter((k) => k !== "__proto__"), json)
    })
  }),
  fc.record({
    role: fc.constant("assistant"),
    content: fc.constant(""),
    metadata: fc.record({
      toolCalls: fc.array(fc.record({ id: storable, name: storable, params: json }), { minLength: 1, maxLength: 2 })
    })
  })
)

/** A value that is not a string (undefined excluded: an absent optional field is valid). */
const notString = anyValue.filter((u) => typeof u !== "string" && u !== undefined)
/**
 * A value other than `undefined`. A property whose value is `undefined` is left out, as
 * `JSON.stringify` does: an unknown key with that value is no excess property.
 */
const defined = anyValue.filter((u) => u !== undefined)
class Point {
  readonly x = 1
  readonly y = 2
}
/**
 * A value a struct refuses as a whole: a primitive (not undefined: an absent optional field is
 * valid), an array, a function, or an object that is not plain data (a `Date`, a `Map`, a class
 * instance: none is read as `{}`).
 */
const notRecord: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.bigInt(),
  fc.array(fc.jsonValue(), { maxLength: 3 }),
  fc.constant(() => 1),
  fc.constantFrom<() => unknown>(
    () => new Date(0),
    () => new Map([["modelVariant", "mini"]]),
    () => new Set(["x"]),
    () => new URL("https://example.com/"),
    () => new Point(),
    () => new Uint8Array(2),
    () => Object.create({ modelVariant: "inherited" })
  ).map((make) => make())
)
/** A key none of the given ones. */
const otherKey = (known: ReadonlyArray<string>) =>
  fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !known.includes(k))
const messageKeys = ["role", "content", "metadata", "createdAt"]
const metadataKeys = ["modelVariant", "toolCalls", "toolCallId", "toolName", "isError", "attributes"]
const user = (content = "hello") => ({ role: "user", content })

/** A message with one bad field, and the path of that field within the message. */
export const badMessage: fc.Arbitrary<{ readonly message: unknown; readonly path: string }> = fc.oneof(
  fc.oneof(fc.constantFrom("summary", "wizard", "", "USER", "tool "), notString).map((role) => ({
    message: { role, content: "x" },
    path: ".role"
  })),
  fc.constant({ message: { content: "x" }, path: ".role" }),
  fc.oneof(notString, unstorable).map((content) => ({ message: user(), path: ".content", content })).map((
    { content, message, path }
  ) => ({ message: { ...message, content }, path })),
  fc.constantFrom("system", "user", "tool").map((role) => ({
    message: { role, content: "", metadata: { toolCallId: "c" } },
    path: ".content"
  })),
  fc.constant({ message: { role: "user" }, path: ".content" }),
  fc.tuple(otherKey(messageKeys), defined).map(([key, value]) => ({
    message: { ...user(), [key]: value },
    path: `.${key}`
  })),
  notRecord.map((metadata) => ({ message: { ...user(), metadata }, path: ".metadata" })),
  fc.oneof(
    notString,
    fc.constantFrom(
      "",
      "yesterday",
      "2026-03-14",
      "2026-03-14 09:12:00Z",
      "2026-02-30T00:00:00Z",
      "0999-12-31T23:59:59Z"
    ),
    // Without a zone: a local time of no named zone.
    isoTime(earliest, new Date("9999-12-31T23:59:59.999Z")).map((time) => time.slice(0, 19)),
    // Ahead of the write: under the test clock (the epoch), any time more than 5 minutes after it.
    isoTime(new Date(5 * 60 * 1000 + 1), new Date("9999-12-31T23:59:59.999Z"))
  ).map((createdAt) => ({ message: { ...user(), createdAt }, path: ".createdAt" })),
  fc.tuple(otherKey([...metadataKeys, "summaryMetadataId"]), defined).map(([key, value]) => ({
    message: { ...user(), metadata: { [key]: value } },
    path: `.metadata.${key}`
  })),
  fc.constant({ message: { ...user(), metadata: { summaryMetadataId: 1 } }, path: ".metadata.summaryMetadataId" }),
  fc.oneof(notString, unstorable, fc.constant(""), fc.string({ minLength: 256, maxLength: 300 })).map((v) => ({
    message: { role: "assistant", content: "a", metadata: { modelVariant: v } },
    path: ".metadata.modelVariant"
  })),
  anyValue.filter((v) => typeof v !== "boolean" && v !== undefined).map((isError) => ({
    message: { role: "tool", content: "r", metadata: { toolCallId: "c", isError } },
    path: ".metadata.isError"
  })),
  fc.constantFrom<unknown>(Number.NaN, Infinity, -Infinity, 10n, () => 1, Symbol("s")).map((value) => ({
    message: { ...user(), metadata: { attributes: { key: value } } },
    path: ".metadata.attributes.key"
  })),
  // JSON.stringify would write `undefined` in an array as `null`: refused, not changed.
  fc.constant({
    message: { ...user(), metadata: { attributes: { key: [1, undefined] } } },
    path: ".metadata.attributes.key[1]"
  }),
  fc.constant({
    message: { ...user(), metadata: { toolCalls: [{ id: "a", name: "b", params: {} }] } },
    path: ".metadata.toolCalls"
  }),
  fc.constant({ message: { role: "tool", content: "r" }, path: ".metadata.toolCallId" }),
  fc.oneof(notString, fc.constant(""), unstorable).map((id) => ({
    message: {
      role: "assistant",
      content: "",
      metadata: { toolCalls: [{ id: "ok", name: "t", params: {} }, { id, name: "t", params: {} }] }
    },
    path: ".metadata.toolCalls[1].id"
  })),
  anyValue.filter((v) => !Array.isArray(v) && v !== undefined).map((toolCalls) => ({
    message: { role: "assistant", content: "a", metadata: { toolCalls } },
    path: ".metadata.toolCalls"
  })),
  notRecord.map((message) => ({ message, path: "" }))
)

/** A list of valid messages with one bad one, and the path the refusal must name. */
export const batchWithOneBad = fc.tuple(
  fc.array(validMessage, { maxLength: 4 }),
  badMessage,
  fc.array(validMessage, { maxLength: 4 })
).map(([before, bad, after]) => ({
  messages: [...before, bad.message, ...after],
  path: `messages[${before.length}]${bad.path}`
}))

/** `getMessages` options with one bad field, and its path. */
export const badOptions: fc.Arbitrary<{ readonly options: unknown; readonly path: string }> = fc.oneof(
  fc.oneof(
    fc.integer({ max: 0 }),
    fc.integer({ min: 10_001 }),
    fc.double({ noInteger: true }),
    fc.constantFrom<unknown>(Number.NaN, Infinity, "5", null, true, 10n)
  ).map((limit) => ({ options: { limit }, path: "options.limit" })),
  fc.oneof(
    fc.integer({ max: 0 }),
    fc.double({ noInteger: true }),
    fc.constantFrom<unknown>(Number.NaN, -Infinity, "5", null, [], 10n)
  ).map((before) => ({ options: { limit: 5, before }, path: "options.before" })),
  fc.tuple(otherKey(["limit", "before"]), defined).map(([key, value]) => ({
    options: { [key]: value },
    path: `options.${key}`
  })),
  notRecord.map((options) => ({ options, path: "options" }))
)

/**
 * A value no store can hold, put where JSON goes (`attributes.when`, tool call `params`): `path`
 * is where the refusal points inside it (appended to where it was put), `reason` what it says.
 * `make` builds a fresh one on each call, so that fast-check never holds (or prints) a proxy.
 */
export interface HostileValue {
  readonly name: string
  readonly make: () => unknown
  readonly path: string
  readonly reason: string
}

/** `levels` objects nested in one another through the key `x`. */
export const nestedObjects = (levels: number): unknown => {
  let value: unknown = {}
  for (let i = 1; i < levels; i++) value = { x: value }
  return value
}

/** `levels` arrays nested in one another. */
export const nestedArrays = (levels: number): unknown => {
  let value: unknown = []
  for (let i = 1; i < levels; i++) value = [value]
  return value
}

const tooDeep = "nests more than 32 levels of arrays and objects"
const unreadable = "could not be read: a getter or a proxy trap threw"
const cyclic = "is a cyclic reference (an object that contains itself)"
const notData = (what: string) => `must be plain JSON data, not ${what}`
const boom = (): never => {
  throw new Error("boom")
}

class Items extends Array<number> {}

/** The hostile values of the issue tracker and their kin: each refused, with a path and a reason. */
export const hostileValues: ReadonlyArray<HostileValue> = [
  { name: "objects nested 10,000 deep", make: () => nestedObjects(10_000), path: ".x".repeat(32), reason: tooDeep },
  { name: "objects nested 33 deep", make: () => nestedObjects(33), path: ".x".repeat(32), reason: tooDeep },
  { name: "arrays nested 10,000 deep", make: () => nestedArrays(10_000), path: "[0]".repeat(32), reason: tooDeep },
  {
    name: "a cyclic object",
    make: () => {
      const value: Record<string, unknown> = { a: 1 }
      value.self = value
      return value
    },
    path: ".self",
    reason: cyclic
  },
  {
    name: "a cycle through an array",
    make: () => {
      const list: Array<unknown> = []
      list.push({ back: list })
      return { list }
    },
    path: ".list[0].back",
    reason: cyclic
  },
  {
    name: "a throwing getter",
    make: () => ({
      ok: 1,
      get boom() {
        return boom()
      }
    }),
    path: ".boom",
    reason: unreadable
  },
  {
    name: "a proxy whose get trap throws",
    make: () => new Proxy({ k: 1 }, { get: boom }),
    path: ".k",
    reason: unreadable
  },
  {
    name: "a proxy whose ownKeys trap throws",
    make: () => new Proxy({}, { ownKeys: boom }),
    path: "",
    reason: unreadable
  },
  {
    name: "a proxy whose getPrototypeOf trap throws",
    make: () => new Proxy({}, { getPrototypeOf: boom }),
    path: "",
    reason: unreadable
  },
  {
    name: "a revoked proxy",
    make: () => {
      const { proxy, revoke } = Proxy.revocable({}, {})
      revoke()
      return { inner: proxy }
    },
    path: ".inner",
    reason: unreadable
  },
  {
    name: "an array proxy whose length throws",
    make: () => new Proxy([1, 2], { get: (target, key) => (key === "length" ? boom() : Reflect.get(target, key)) }),
    path: "",
    reason: unreadable
  },
  { name: "a Date", make: () => new Date(0), path: "", reason: notData("a Date") },
  {
    name: "a Date inside an object",
    make: () => ({ at: { when: new Date(0) } }),
    path: ".at.when",
    reason: notData("a Date")
  },
  { name: "a Map", make: () => new Map([["a", 1]]), path: "", reason: notData("a Map") },
  { name: "a Set", make: () => ({ tags: new Set(["a"]) }), path: ".tags", reason: notData("a Set") },
  { name: "a URL", make: () => new URL("https://example.com/"), path: "", reason: notData("a URL") },
  { name: "a class instance", make: () => [new Point()], path: "[0]", reason: notData("an instance of Point") },
  { name: "an Array subclass", make: () => Items.from([1]), path: "", reason: notData("an instance of Items") },
  {
    name: "an object with a custom prototype",
    make: () => Object.create({ inherited: 1 }),
    path: "",
    reason: notData("an object with a custom prototype")
  },
  { name: "a typed array", make: () => new Uint8Array(2), path: "", reason: notData("a Uint8Array") },
  { name: "a boxed string", make: () => ({ s: new String("s") }), path: ".s", reason: notData("a String") },
  { name: "a function", make: () => ({ f: () => 1 }), path: ".f", reason: notData("a function") },
  { name: "a bigint", make: () => [1, 2n], path: "[1]", reason: notData("a bigint") },
  { name: "a symbol", make: () => ({ s: Symbol("s") }), path: ".s", reason: notData("a symbol") },
  {
    name: "a symbol key",
    make: () => ({ [Symbol("k")]: 1 }),
    path: "",
    reason: notData("an object with symbol keys")
  },
  {
    name: "undefined in an array",
    make: () => [1, undefined],
    path: "[1]",
    reason: "must not be undefined (JSON has no undefined: use null)"
  },
  {
    name: "a hole in a sparse array",
    make: () => {
      const list = [0, 1]
      delete list[0]
      return list
    },
    path: "[0]",
    reason: "must not be undefined (JSON has no undefined: use null)"
  },
  { name: "NaN", make: () => ({ n: [Number.NaN] }), path: ".n[0]", reason: "must be a finite number" },
  {
    name: "a nested __proto__ key",
    make: (): unknown => JSON.parse("{\"q\":{\"__proto__\":5}}"),
    path: ".q.__proto__",
    reason: "is a key that must not be \"__proto__\""
  },
  {
    name: "a NUL in a nested key",
    make: () => ({ list: [{ "a\u0000": 1 }] }),
    path: ".list[0].a\u0000",
    reason: "is a key that must not contain NUL (U+0000) characters"
  },
  {
    name: "an unpaired surrogate in a nested string",
    make: () => ({ a: ["ok", "\ud800"] }),
    path: ".a[1]",
    reason: "must be well-formed Unicode (no unpaired surrogates)"
  }
]
