/**
 * Writes `examples/broadband.jsonl`, the long dated support conversation, from its text in
 * `scripts/broadband/conversation.txt`: `npx tsx scripts/broadband/conversation.ts`. Each session of the
 * text starts at its own date and time; the messages in it follow a few seconds to a few minutes
 * apart, by how long they are to read and write (deterministic: the same text gives the same file).
 */
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const source = fileURLToPath(new URL("./conversation.txt", import.meta.url))
const target = fileURLToPath(new URL("../../examples/broadband.jsonl", import.meta.url))

const system = "You are Juno, the customer support assistant of Northgate Fibre, a broadband and phone provider. " +
  "You help account holders with faults, bills, orders, appointments and home moves, keep track of what they " +
  "tell you across conversations, and never guess an account detail you can look up. Tools: lookup_account, " +
  "line_test, create_ticket, book_engineer, reschedule_appointment, get_invoice, issue_credit, create_quote, " +
  "place_order, cancel_order, update_contact, log_complaint."

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

for (const [i, raw] of readFileSync(source, "utf8").split("\n").entries()) {
  const line = raw.trim()
  const where = `conversation.txt:${i + 1}`
  if (line.length === 0 || line.startsWith("#")) continue
  index += 1
  if (line.startsWith("@ ")) {
    clock = Date.parse(`${line.slice(2).replace(" ", "T")}:00Z`)
    if (Number.isNaN(clock)) throw new Error(`${where}: not a session's date and time`)
    if (lines.length === 0) lines.push(render({ role: "system", content: system, createdAt: at() }))
    continue
  }
  const kind = line.slice(0, 2)
  const text = line.slice(2).trim()
  if (kind === "U:") {
    // Reading the answer, then typing: a few seconds per word, and a pause of up to two minutes.
    if (lines.length > 1) clock += (20 + words(text) * 3 + draw(index, 120)) * 1000
    lines.push(render({ role: "user", content: text, createdAt: at() }))
  } else if (kind === "A:") {
    clock += (4 + draw(index, 14)) * 1000
    lines.push(render({ role: "assistant", content: text, createdAt: at() }))
  } else if (kind === "C:") {
    const [content = "", call = ""] = text.split(" || ")
    const space = call.indexOf(" ")
    pendingCall = {
      id: `call_${(0x5a17 + index).toString(16)}${draw(index, 0xffff).toString(16)}`,
      name: call.slice(0, space)
    }
    clock += (4 + draw(index, 10)) * 1000
    lines.push(render({
      role: "assistant",
      content,
      metadata: {
        toolCalls: [{ id: pendingCall.id, name: pendingCall.name, params: parseJson(call.slice(space + 1), where) }]
      },
      createdAt: at()
    }))
  } else if (kind === "R:" && pendingCall !== undefined) {
    clock += 1000
    lines.push(render({
      role: "tool",
      content: text,
      metadata: { toolCallId: pendingCall.id, toolName: pendingCall.name },
      createdAt: at()
    }))
    pendingCall = undefined
  } else {
    throw new Error(`${where}: expected "@ ", "U:", "A:", "C:" or "R:" (after "C:")`)
  }
}

writeFileSync(target, `${lines.join("\n")}\n`)
console.log(`examples/broadband.jsonl: ${lines.length} messages`)
