import type { Tool } from "@alisio/domain/Tool"
import * as AskUserQuestion from "./AskUserQuestion.js"
import * as Bash from "./Bash.js"
import * as Edit from "./Edit.js"
import * as Glob from "./Glob.js"
import * as Grep from "./Grep.js"
import * as Ls from "./Ls.js"
import * as Read from "./Read.js"
import * as Write from "./Write.js"

/** Caps and timeouts of the builtin tools; every field has a default. */
export interface BuiltinToolsOptions {
  readonly read?: Read.ReadOptions
  readonly edit?: Edit.EditOptions
  readonly ls?: Ls.LsOptions
  readonly glob?: Glob.GlobOptions
  readonly grep?: Grep.GrepOptions
  readonly bash?: Bash.BashOptions
}

/** The builtin coding tools (TL-1): read, write, edit, ls, glob, grep, bash, ask_user_question. */
export const builtinTools = (options: BuiltinToolsOptions = {}): ReadonlyArray<Tool> => [
  Read.make(options.read),
  Write.make(),
  Edit.make(options.edit),
  Ls.make(options.ls),
  Glob.make(options.glob),
  Grep.make(options.grep),
  Bash.make(options.bash),
  AskUserQuestion.make()
]
