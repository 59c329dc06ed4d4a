// A fake model server on 127.0.0.1 for the side-by-side bench: the same two-turn task in three
// wire protocols. Turn one answers with one shell tool call running `echo hi`; once the request
// carries that call's output, the answer is text streamed in `deltas` deltas. Requests that offer
// no shell tool (title generation, quota probes …) get a short text and are logged as "aux".
// Every request is logged, so the runner can check each peer stayed on this server and really
// ran the command.
import { createServer } from "node:http"

export const FINAL_MARK = "BENCH-OK"

/** The final answer as deltas: the mark, then " word" repeated. */
const answerDeltas = (deltas) => {
  const parts = [FINAL_MARK]
  for (let i = 1; i < deltas; i++) parts.push(" word")
  return parts
}

const shellNames = ["bash", "Bash", "shell", "shell_command", "exec_command", "local_shell"]

/** The shell tool a request offers and the arguments that make it run `echo hi`, or undefined. */
const pickShell = (tools) => {
  const list = Array.isArray(tools) ? tools : []
  const named = list.map((tool) => ({
    name: tool.function?.name ?? tool.name,
    schema: tool.function?.parameters ?? tool.parameters ?? tool.input_schema ?? {}
  }))
  for (const wanted of shellNames) {
    const tool = named.find((t) => t.name === wanted)
    if (tool === undefined) continue
    const props = tool.schema.properties ?? {}
    if (props.command?.type === "array") return { name: tool.name, args: { command: ["bash", "-lc", "echo hi"] } }
    if (props.cmd !== undefined && props.command === undefined) return { name: tool.name, args: { cmd: "echo hi" } }
    return { name: tool.name, args: { command: "echo hi" } }
  }
  return undefined
}

const text = (value) => {
  if (typeof value === "string") return value
  if (Array.isArray(value)) return value.map(text).join("")
  if (value !== null && typeof value === "object") return text(value.text ?? value.content ?? value.output ?? "")
  return ""
}

// --- OpenAI Chat Completions -------------------------------------------------------------------

const chatChunk = (delta, finish = null) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "test-model",
    choices: [{ index: 0, delta, finish_reason: finish }]
  })}\n\n`

const chatUsage = `data: ${JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion.chunk",
  created: 1_700_000_000,
  model: "test-model",
  choices: [],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }
})}\n\n`

const chat = (body, deltas, res) => {
  const messages = body.messages ?? []
  const toolMessage = messages.find((m) => m.role === "tool")
  const shell = pickShell(body.tools)
  const kind = toolMessage !== undefined ? "answer" : shell !== undefined ? "tool" : "aux"
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  res.write(chatChunk({ role: "assistant", content: "" }))
  if (kind === "tool") {
    const args = JSON.stringify(shell.args)
    const half = Math.ceil(args.length / 2)
    const call = { index: 0, id: "call_bench", type: "function", function: { name: shell.name, arguments: "" } }
    res.write(chatChunk({ tool_calls: [call] }))
    res.write(chatChunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, half) } }] }))
    res.write(chatChunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] }))
    res.write(chatChunk({}, "tool_calls"))
  } else {
    for (const part of kind === "answer" ? answerDeltas(deltas) : ["bench title"])
      res.write(chatChunk({ content: part }))
    res.write(chatChunk({}, "stop"))
  }
  res.write(chatUsage)
  res.end("data: [DONE]\n\n")
  return { kind, toolOutput: toolMessage === undefined ? undefined : text(toolMessage.content) }
}

// --- OpenAI Responses --------------------------------------------------------------------------

const responseEvent = (type, payload) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`

const responses = (body, deltas, res) => {
  const input = Array.isArray(body.input) ? body.input : []
  const output = input.find((item) => item.type === "function_call_output" || item.type === "custom_tool_call_output")
  const shell = pickShell(body.tools)
  const kind = output !== undefined ? "answer" : shell !== undefined ? "tool" : "aux"
  const id = `resp_bench_${kind}`
  const base = { id, object: "response", created_at: 1_700_000_000, model: body.model ?? "test-model" }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  res.write(responseEvent("response.created", { response: { ...base, status: "in_progress", output: [] } }))
  let item
  if (kind === "tool") {
    const args = JSON.stringify(shell.args)
    item = { type: "function_call", id: "fc_bench", call_id: "call_bench", name: shell.name, arguments: args }
    res.write(
      responseEvent("response.output_item.added", {
        output_index: 0,
        item: { ...item, arguments: "", status: "in_progress" }
      })
    )
    res.write(
      responseEvent("response.function_call_arguments.delta", { item_id: "fc_bench", output_index: 0, delta: args })
    )
    res.write(
      responseEvent("response.function_call_arguments.done", {
        item_id: "fc_bench",
        output_index: 0,
        arguments: args
      })
    )
    item = { ...item, status: "completed" }
  } else {
    const parts = kind === "answer" ? answerDeltas(deltas) : ["bench title"]
    const message = { type: "message", id: "msg_bench", role: "assistant", status: "in_progress", content: [] }
    res.write(responseEvent("response.output_item.added", { output_index: 0, item: message }))
    res.write(
      responseEvent("response.content_part.added", {
        item_id: "msg_bench",
        output_index: 0,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] }
      })
    )
    for (const delta of parts)
      res.write(
        responseEvent("response.output_text.delta", { item_id: "msg_bench", output_index: 0, content_index: 0, delta })
      )
    const full = parts.join("")
    res.write(
      responseEvent("response.output_text.done", {
        item_id: "msg_bench",
        output_index: 0,
        content_index: 0,
        text: full
      })
    )
    item = { ...message, status: "completed", content: [{ type: "output_text", text: full, annotations: [] }] }
  }
  res.write(responseEvent("response.output_item.done", { output_index: 0, item }))
  const usage = {
    input_tokens: 12,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 7,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 19
  }
  res.end(responseEvent("response.completed", { response: { ...base, status: "completed", output: [item], usage } }))
  return { kind, toolOutput: output === undefined ? undefined : text(output.output) }
}

// --- Anthropic Messages ------------------------------------------------------------------------

const anthropicEvent = (type, payload) => `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`

const messages = (body, deltas, res) => {
  const results = (body.messages ?? [])
    .flatMap((m) => (Array.isArray(m.content) ? m.content : []))
    .filter((block) => block.type === "tool_result")
  const shell = pickShell(body.tools)
  const kind = results.length > 0 ? "answer" : shell !== undefined ? "tool" : "aux"
  const parts = kind === "answer" ? answerDeltas(deltas) : ["bench title"]
  const usage = { input_tokens: 12, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
  const message = {
    id: `msg_bench_${kind}`,
    type: "message",
    role: "assistant",
    model: body.model ?? "claude-bench",
    stop_sequence: null
  }
  const toolOutput = results.length > 0 ? results.map((r) => text(r.content)).join("\n") : undefined
  if (body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" })
    const content =
      kind === "tool"
        ? [{ type: "tool_use", id: "toolu_bench", name: shell.name, input: shell.args }]
        : [{ type: "text", text: parts.join("") }]
    res.end(JSON.stringify({ ...message, content, stop_reason: kind === "tool" ? "tool_use" : "end_turn", usage }))
    return { kind, toolOutput }
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  res.write(
    anthropicEvent("message_start", { message: { ...message, content: [], stop_reason: null, usage: { ...usage } } })
  )
  if (kind === "tool") {
    const args = JSON.stringify(shell.args)
    const half = Math.ceil(args.length / 2)
    res.write(
      anthropicEvent("content_block_start", {
        index: 0,
        content_block: { type: "tool_use", id: "toolu_bench", name: shell.name, input: {} }
      })
    )
    for (const partial_json of [args.slice(0, half), args.slice(half)])
      res.write(anthropicEvent("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json } }))
  } else {
    res.write(anthropicEvent("content_block_start", { index: 0, content_block: { type: "text", text: "" } }))
    for (const part of parts)
      res.write(anthropicEvent("content_block_delta", { index: 0, delta: { type: "text_delta", text: part } }))
  }
  res.write(anthropicEvent("content_block_stop", { index: 0 }))
  res.write(
    anthropicEvent("message_delta", {
      delta: { stop_reason: kind === "tool" ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: 7 }
    })
  )
  res.end(anthropicEvent("message_stop", {}))
  return { kind, toolOutput }
}

// --- The server --------------------------------------------------------------------------------

/**
 * Starts the server on an ephemeral 127.0.0.1 port. `log` collects one entry per request:
 * `{ method, path, kind, toolOutput? }`, kind being tool | answer | aux | other.
 */
export const startServer = async () => {
  const state = { deltas: 200, log: [], escapes: [] }
  const server = createServer((req, res) => {
    const chunks = []
    req.on("data", (chunk) => chunks.push(chunk))
    req.on("end", () => {
      const path = (req.url ?? "/").replace(/\?.*$/, "")
      const entry = { method: req.method, path, kind: "other" }
      state.log.push(entry)
      let body = {}
      try {
        const raw = Buffer.concat(chunks).toString("utf8")
        body = raw === "" ? {} : JSON.parse(raw)
      } catch {
        body = {}
      }
      if (process.env.BENCH_PEERS_DEBUG === "1") entry.body = body
      try {
        if (req.method === "POST" && path.endsWith("/chat/completions")) {
          Object.assign(entry, chat(body, state.deltas, res))
        } else if (req.method === "POST" && path.endsWith("/responses")) {
          Object.assign(entry, responses(body, state.deltas, res))
        } else if (req.method === "POST" && path.endsWith("/messages/count_tokens")) {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ input_tokens: 12 }))
        } else if (req.method === "POST" && path.endsWith("/messages")) {
          Object.assign(entry, messages(body, state.deltas, res))
        } else if (req.method === "GET" && path.endsWith("/models")) {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ object: "list", data: [{ id: "test-model", object: "model", owned_by: "bench" }] }))
        } else {
          res.writeHead(404, { "content-type": "application/json" })
          res.end(JSON.stringify({ error: { type: "not_found", message: `no route ${path}` } }))
        }
      } catch (error) {
        entry.kind = "error"
        entry.error = String(error)
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: { type: "server_error", message: String(error) } }))
      }
    })
  })
  // A proxy that refuses at once: peers get HTTPS_PROXY pointing here, so an attempt to reach
  // anything but this server fails fast and is logged with its destination.
  const proxy = createServer((req, res) => {
    state.escapes.push(`${req.method} ${req.url}`)
    res.writeHead(403)
    res.end()
  })
  proxy.on("connect", (req, socket) => {
    state.escapes.push(`CONNECT ${req.url}`)
    socket.end("HTTP/1.1 403 Forbidden\r\n\r\n")
  })
  // A peer that exits mid-stream resets its sockets: not the server's concern.
  for (const s of [server, proxy]) s.on("connection", (socket) => socket.on("error", () => {}))
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  const { port } = server.address()
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    proxy: `http://127.0.0.1:${proxy.address().port}`,
    /** Answers from now on stream this many deltas; clears the logs. */
    reset: (deltas) => {
      state.deltas = deltas
      state.log = []
      state.escapes = []
    },
    log: () => state.log,
    /** What tried to leave through the proxy since the last reset. */
    escapes: () => state.escapes,
    close: () =>
      Promise.all(
        [server, proxy].map(
          (s) =>
            new Promise((resolve) => {
              s.closeAllConnections()
              s.close(() => resolve())
            })
        )
      )
  }
}

// `node bench/peers/server.mjs [deltas]`: serve and print each request, to try a peer by hand.
if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await startServer()
  server.reset(Number(process.argv[2] ?? 5))
  console.log(`listening on ${server.origin}, refusing proxy on ${server.proxy}`)
  setInterval(() => {
    for (const entry of server.log().splice(0)) console.log(JSON.stringify(entry))
    for (const attempt of server.escapes().splice(0)) console.log(`proxy: ${attempt}`)
  }, 200)
}
