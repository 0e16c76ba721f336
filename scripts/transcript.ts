/**
 * Writes a dated development conversation, `examples/<name>.jsonl`, from its text in
 * `scripts/<name>/conversation.txt`: `npx tsx scripts/transcript.ts chat` (or `broadband`). The
 * text opens with the system prompt (`S: …`); each session of it starts at its own date and time; the messages in it follow a few seconds to a few minutes
 * apart, by how long they are to read and write (deterministic: the same text gives the same file).
 * A text may hold several conversations of one user: `== <name>` starts one (a unique lowercase
 * slug); each message then carries its `conversation`, and each conversation opens with the system
 * prompt, dated at its first session.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const name = process.argv[2] ?? ""
if (!/^[a-z]+$/.test(name)) throw new Error("usage: npx tsx scripts/transcript.ts <name> (e.g. chat, broadband)")
const source = fileURLToPath(new URL(`./${name}/conversation.txt`, import.meta.url))
const target = fileURLToPath(new URL(`../examples/${name}.jsonl`, import.meta.url))
let system: string | undefined

type Json = string | number | boolean | null | ReadonlyArray<Json> | { readonly [key: string]: Json }

/** JSON with a space after each colon and comma, as the other examples are written. */
const render = (value: Json): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(render).join(", ")}]`
  return `{${Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${render(item)}`).join(", ")}}`
}

const parseJson = (text: string, where: string): Json => {
  const value: unknown = JSON.parse(text)
  if (!isJson(value)) throw new Error(`${where}: not JSON data`)
  return value
}

const isJson = (value: unknown): value is Json =>
  value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean" ||
  (Array.isArray(value) ? value.every(isJson) : typeof value === "object" && Object.values(value).every(isJson))

/** A number from 0 to `range - 1` drawn from `n` (a small integer hash): the same `n`, the same number. */
const draw = (n: number, range: number): number => {
  let x = (n + 0x9e3779b9) >>> 0
  x = Math.imul(x ^ (x >>> 16), 0x45d9f3b) >>> 0
  x = Math.imul(x ^ (x >>> 16), 0x45d9f3b) >>> 0
  return ((x ^ (x >>> 16)) >>> 0) % range
}

const words = (text: string): number => text.split(/\s+/).filter((word) => word.length > 0).length

const lines: Array<string> = []
let clock = 0
let index = 0
let pendingCall: { readonly id: string; readonly name: string } | undefined
const at = () => new Date(clock).toISOString().replace(".000Z", "Z")
/** The conversation being written (none in a text without `==` lines) and the line its system prompt is on. */
let conversation: { readonly name: string; opened: number | undefined } | undefined
const conversations = new Set<string>()
const write = (message: { readonly [key: string]: Json }) =>
  lines.push(render(conversation === undefined ? message : { conversation: conversation.name, ...message }))

for (const [i, raw] of readFileSync(source, "utf8").split("\n").entries()) {
  const line = raw.trim()
  const where = `${name}/conversation.txt:${i + 1}`
  if (line.length === 0 || line.startsWith("#")) continue
  if (line.startsWith("S:")) {
    system = line.slice(2).trim()
    continue
  }
  if (line.startsWith("== ")) {
    const next = line.slice(3).trim()
    if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(next)) throw new Error(`${where}: a conversation's name is a lowercase slug`)
    if (conversations.has(next)) throw new Error(`${where}: conversation ${next} is started twice`)
    if (conversation === undefined && lines.length > 0) {
      throw new Error(`${where}: messages come before the first conversation (== …)`)
    }
    if (pendingCall !== undefined) throw new Error(`${where}: a tool call's result (R: …) is missing`)
    conversations.add(next)
    conversation = { name: next, opened: undefined }
    continue
  }
  index += 1
  if (line.startsWith("@ ")) {
    clock = Date.parse(`${line.slice(2).replace(" ", "T")}:00Z`)
    if (Number.isNaN(clock)) throw new Error(`${where}: not a session's date and time`)
    if (system === undefined) throw new Error(`${where}: the system prompt (S: …) comes before the first session`)
    if (conversation === undefined ? lines.length === 0 : conversation.opened === undefined) {
      if (conversation !== undefined) conversation.opened = lines.length
      write({ role: "system", content: system, createdAt: at() })
    }
    continue
  }
  if (conversation !== undefined && conversation.opened === undefined) {
    throw new Error(`${where}: a conversation opens with a session (@ date time)`)
  }
  const kind = line.slice(0, 2)
  const text = line.slice(2).trim()
  if (kind === "U:") {
    // Reading the answer, then typing: a few seconds per word, and a pause of up to two minutes.
    if (lines.length > (conversation?.opened ?? 0) + 1) clock += (20 + words(text) * 3 + draw(index, 120)) * 1000
    write({ role: "user", content: text, createdAt: at() })
  } else if (kind === "A:") {
    clock += (4 + draw(index, 14)) * 1000
    write({ role: "assistant", content: text, createdAt: at() })
  } else if (kind === "C:") {
    const [content = "", call = ""] = text.split(" || ")
    const space = call.indexOf(" ")
    pendingCall = {
      id: `call_${(0x5a17 + index).toString(16)}${draw(index, 0xffff).toString(16)}`,
      name: call.slice(0, space)
    }
    clock += (4 + draw(index, 10)) * 1000
    write({
      role: "assistant",
      content,
      metadata: {
        toolCalls: [{ id: pendingCall.id, name: pendingCall.name, params: parseJson(call.slice(space + 1), where) }]
      },
      createdAt: at()
    })
  } else if (kind === "R:" && pendingCall !== undefined) {
    clock += 1000
    write({
      role: "tool",
      content: text,
      metadata: { toolCallId: pendingCall.id, toolName: pendingCall.name },
      createdAt: at()
    })
    pendingCall = undefined
  } else {
    throw new Error(`${where}: expected "S:", "== ", "@ ", "U:", "A:", "C:" or "R:" (after "C:")`)
  }
}

writeFileSync(target, `${lines.join("\n")}\n`)
console.log(
  `examples/${name}.jsonl: ${lines.length} messages${
    conversations.size === 0 ? "" : `, ${conversations.size} conversations`
  }`
)
