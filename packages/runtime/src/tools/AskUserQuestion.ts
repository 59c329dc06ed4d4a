import { ToolError } from "@alisio/domain/Errors"
import { defineTool, type Tool, textResult } from "@alisio/domain/Tool"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { nonBlankString } from "./internal/schema.js"

const Input = Schema.Struct({
  question: nonBlankString("The question, in a sentence or two."),
  options: Schema.optional(
    Schema.Array(Schema.String).annotations({ description: "Suggested answers the person may pick from." })
  )
})

/** `ask_user_question` (TL-1): asks the person; in a headless run, says that nobody can answer. */
export const make = (): Tool =>
  defineTool({
    name: "ask_user_question",
    description:
      "Asks the person running the agent a question and returns their answer. Use it only when a " +
      "decision is theirs to make; in a headless run nobody answers.",
    effect: "internal",
    input: Input,
    run: (input, context) =>
      context
        .askUser(
          input.options === undefined
            ? { question: input.question }
            : {
                question: input.question,
                options: input.options
              }
        )
        .pipe(
          Effect.map((answer) => textResult(answer)),
          Effect.mapError(
            (error) =>
              new ToolError({
                message:
                  `No person is available to answer (${error.message}). ` +
                  "Go on with your best judgement and state the assumption you made."
              })
          )
        )
  })
