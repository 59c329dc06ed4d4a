// What the model is told of the memory tools: names, descriptions and the JSON Schemas of their
// arguments, as constants, so that a run offers them without importing the store or deriving a JSON
// Schema (issue 17). `MemoryTools.ts` decodes the arguments with the Schemas these are derived from
// (a test keeps the two equal) and is given these rather than importing them: the bundle then keeps
// them in the plugin's entry chunk instead of a chunk of their own loaded at every start.
import type { ToolSpec } from "@alisio/domain/Tool"

const int = { Int: { type: "integer", description: "an integer", title: "int" } }
const memoryId = {
  $ref: "#/$defs/Int",
  description: "A memory's id, as in #12.",
  title: "positive",
  exclusiveMinimum: 0
}

const save: ToolSpec = {
  name: "memory_save",
  description:
    "Saves a memory that outlives this session: a decision, a convention, a fix, a preference. Saving again with the same topic_key updates that memory instead of adding one. Text inside <private>…</private> is stored as [private].",
  parameters: {
    type: "object",
    required: ["content"],
    properties: {
      title: { type: "string", description: "A short title." },
      content: { type: "string" },
      type: { type: "string", description: "A kind such as decision, convention, bug, preference; note by default." },
      scope: {
        type: "string",
        enum: ["project", "personal"],
        description: "project (default): only this workspace sees it; personal: every workspace does."
      },
      topic_key: {
        type: "string",
        description: "A stable key such as auth/session-format; a later save with the same key replaces this memory."
      }
    },
    additionalProperties: false
  }
}

const search: ToolSpec = {
  name: "memory_search",
  description:
    "Searches saved memories by words (full text, ranked by relevance and recency). Returns ids with a snippet; read one with memory_get.",
  parameters: {
    $defs: int,
    type: "object",
    required: ["query"],
    properties: {
      query: { type: "string", description: "Words to look for." },
      limit: {
        allOf: [
          {
            $ref: "#/$defs/Int",
            description: "a number between 1 and 50",
            title: "between(1, 50)",
            minimum: 1,
            maximum: 50
          }
        ],
        description: "At most this many results (10 by default)."
      },
      match: {
        type: "string",
        enum: ["all", "any"],
        description: "all (default): every word must appear; any: at least one."
      },
      all_projects: {
        type: "boolean",
        description: "Also search other workspaces' memories (listed as another workspace; memory_get reads them)."
      }
    },
    additionalProperties: false
  }
}

const get: ToolSpec = {
  name: "memory_get",
  description:
    "Reads one saved memory in full, by id: one of this workspace, a personal one, or one of another workspace that memory_search listed with all_projects.",
  parameters: {
    $defs: int,
    type: "object",
    required: ["id"],
    properties: { id: memoryId },
    additionalProperties: false
  }
}

const forget: ToolSpec = {
  name: "memory_forget",
  description:
    "Forgets a memory by id: hidden from search and from new sessions. hard: true deletes it from the file for good.",
  parameters: {
    $defs: int,
    type: "object",
    required: ["id"],
    properties: {
      id: memoryId,
      hard: { type: "boolean", description: "Delete for good (default: hide it)." }
    },
    additionalProperties: false
  }
}

/** The memory tools by name, in the order they are registered. */
export const memoryToolSpecs = {
  memory_save: save,
  memory_search: search,
  memory_get: get,
  memory_forget: forget
} as const
export type MemoryToolSpecs = typeof memoryToolSpecs

/** `/memory`, as the command catalog lists it. */
export const memoryCommandSpec = {
  name: "memory",
  description: "Search saved memories (/memory <words>) or forget one (/memory forget <id>)."
}
export type MemoryCommandSpec = typeof memoryCommandSpec
