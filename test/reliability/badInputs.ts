/**
 * Generated input for the public methods as callers outside the type system send it: arbitrary
 * values (JSON and beyond), and near-valid messages and options with exactly one bad field, whose
 * path the refusal must name.
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
  })
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
 * A value a struct refuses as a whole: a primitive (not undefined: an absent optional field is
 * valid), an array or a function. (Other objects are records to the schema: a `Date` or a `Map`
 * has no own keys and reads as `{}`.)
 */
const notRecord: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.bigInt(),
  fc.array(fc.jsonValue(), { maxLength: 3 }),
  fc.constant(() => 1)
)
/** A key none of the given ones. */
const otherKey = (known: ReadonlyArray<string>) =>
  fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !known.includes(k))
const messageKeys = ["role", "content", "metadata"]
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
  fc.tuple(otherKey(messageKeys), anyValue).map(([key, value]) => ({
    message: { ...user(), [key]: value },
    path: `.${key}`
  })),
  notRecord.map((metadata) => ({ message: { ...user(), metadata }, path: ".metadata" })),
  fc.tuple(otherKey([...metadataKeys, "summaryMetadataId"]).map((k) => k), anyValue).map(([key, value]) => ({
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
  fc.constantFrom<unknown>(Number.NaN, Infinity, -Infinity, 10n, () => 1, Symbol("s"), undefined).map((
    value
  ) => ({
    message: { ...user(), metadata: { attributes: { key: value } } },
    path: ".metadata.attributes.key"
  })),
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
  fc.tuple(otherKey(["limit", "before"]), anyValue).map(([key, value]) => ({
    options: { [key]: value },
    path: `options.${key}`
  })),
  notRecord.map((options) => ({ options, path: "options" }))
)
