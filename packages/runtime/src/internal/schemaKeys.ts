// The keys a Schema lets an object hold at some path of its input: what a mistyped configuration
// key is compared with, so the warning can name the key that was meant.

import type * as AST from "effect/SchemaAST"

/** The object types `ast` may decode from: unions opened, refinements and transformations by their input. */
const shapes = (ast: AST.AST): ReadonlyArray<AST.TypeLiteral> => {
  switch (ast._tag) {
    case "TypeLiteral":
      return [ast]
    case "Union":
      return ast.types.flatMap(shapes)
    case "Refinement":
      return shapes(ast.from)
    // A loose input (one that takes any key) is made strict by its output: the output's keys are the ones.
    case "Transformation": {
      const input = shapes(ast.from)
      return input.some((shape) => shape.indexSignatures.length > 0) ? shapes(ast.to) : input
    }
    case "Suspend":
      return shapes(ast.f())
    default:
      return []
  }
}

/** The types `key` has in these objects: its declared property, else what their records hold. */
const step = (objects: ReadonlyArray<AST.TypeLiteral>, key: PropertyKey): ReadonlyArray<AST.AST> =>
  objects.flatMap((shape) => {
    const named = shape.propertySignatures.find((signature) => signature.name === key)
    if (named !== undefined) return [named.type]
    return shape.indexSignatures.map((signature) => signature.type)
  })

/** The declared keys of the objects found at `path` of the input `ast` describes (records' keys count as any). */
export const keysAt = (ast: AST.AST, path: ReadonlyArray<PropertyKey>): ReadonlyArray<string> => {
  let current: ReadonlyArray<AST.TypeLiteral> = shapes(ast)
  for (const key of path) current = step(current, key).flatMap(shapes)
  const keys = new Set<string>()
  for (const shape of current) {
    for (const signature of shape.propertySignatures) {
      if (typeof signature.name === "string") keys.add(signature.name)
    }
  }
  return [...keys]
}

/**
 * Where `path` leaves the keys `ast` declares: the index of the first segment no object there
 * declares (a record takes any key), or `undefined` when every segment is declared.
 */
export const undeclaredAt = (ast: AST.AST, path: ReadonlyArray<string>): number | undefined => {
  let current: ReadonlyArray<AST.TypeLiteral> = shapes(ast)
  for (const [index, key] of path.entries()) {
    const next = step(current, key)
    if (next.length === 0) return index
    // A value that is not an object (a number, a list) has no shapes: the next key is undeclared.
    current = next.flatMap(shapes)
  }
  return undefined
}
