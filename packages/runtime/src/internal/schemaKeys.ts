// The keys a Schema lets an object hold at some path of its input: what a mistyped configuration
// key is compared with, so the warning can name the key that was meant.

import type * as AST from "effect/SchemaAST"

/** The object types `ast` may decode from: unions opened, refinements by their input, transformations by both sides. */
const shapes = (ast: AST.AST): ReadonlyArray<AST.TypeLiteral> => {
  switch (ast._tag) {
    case "TypeLiteral":
      return [ast]
    case "Union":
      return ast.types.flatMap(shapes)
    case "Refinement":
      return shapes(ast.from)
    // Either side may be the one that refuses a key (a loose input made strict by its output).
    case "Transformation":
      return [...shapes(ast.from), ...shapes(ast.to)]
    case "Suspend":
      return shapes(ast.f())
    default:
      return []
  }
}

/** The declared keys of the objects found at `path` of the input `ast` describes (records' keys count as any). */
export const keysAt = (ast: AST.AST, path: ReadonlyArray<PropertyKey>): ReadonlyArray<string> => {
  let current: ReadonlyArray<AST.TypeLiteral> = shapes(ast)
  for (const key of path) {
    current = current.flatMap((shape) => {
      const named = shape.propertySignatures.find((signature) => signature.name === key)
      if (named !== undefined) return shapes(named.type)
      return shape.indexSignatures.flatMap((signature) => shapes(signature.type))
    })
  }
  const keys = new Set<string>()
  for (const shape of current) {
    for (const signature of shape.propertySignatures) {
      if (typeof signature.name === "string") keys.add(signature.name)
    }
  }
  return [...keys]
}
