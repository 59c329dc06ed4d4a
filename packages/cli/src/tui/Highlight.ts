// Syntax highlighting of code blocks in answers: a small tokenizer (comments, strings, numbers,
// keywords) that covers the languages answers usually hold. Linear in the code's length, and each
// line is closed on its own, since the renderer resets styles at every line end.

const KEYWORDS = new Set(
  (
    "abstract as async await break case catch class const continue def default defer del do elif else " +
    "enum export extends false final finally fn for from func function go if impl implements import in " +
    "instanceof interface is let loop match mod module mut new nil None not null of or package pass " +
    "private protected pub public raise readonly return self static struct super switch this throw " +
    "trait true True False try type typeof undefined use var void where while with yield fi then done " +
    "esac local echo export"
  ).split(" ")
)

const HASH_COMMENTS = new Set(["python", "py", "sh", "bash", "shell", "zsh", "ruby", "rb", "yaml", "yml", "toml"])

const paint = (code: string) => (text: string) => (text === "" ? "" : `\x1b[${code}m${text}\x1b[39m`)
const keyword = paint("35")
const string = paint("32")
const comment = paint("90")
const number = paint("33")

const isWord = (c: string) => /[A-Za-z0-9_$]/.test(c)

/** The code's lines with ANSI colours; the language only decides which comments exist. */
export const highlight = (code: string, lang?: string): Array<string> => {
  const hash = lang !== undefined && HASH_COMMENTS.has(lang.toLowerCase())
  const out: Array<string> = []
  for (const line of code.split("\n")) out.push(highlightLine(line, hash))
  return out
}

const highlightLine = (line: string, hash: boolean): string => {
  let result = ""
  let i = 0
  while (i < line.length) {
    const c = line[i]!
    if ((c === "/" && line[i + 1] === "/") || (hash && c === "#") || (c === "-" && line[i + 1] === "-" && !hash)) {
      if (c === "-" && !/^--\s/.test(line.slice(i))) {
        result += c
        i += 1
        continue
      }
      result += comment(line.slice(i))
      break
    }
    if (c === '"' || c === "'" || c === "`") {
      let j = i + 1
      while (j < line.length && line[j] !== c) j += line[j] === "\\" ? 2 : 1
      result += string(line.slice(i, j + 1))
      i = j + 1
      continue
    }
    if (/[0-9]/.test(c) && (i === 0 || !isWord(line[i - 1]!))) {
      let j = i + 1
      while (j < line.length && /[0-9a-fA-FxX._]/.test(line[j]!)) j += 1
      result += number(line.slice(i, j))
      i = j
      continue
    }
    if (isWord(c)) {
      let j = i + 1
      while (j < line.length && isWord(line[j]!)) j += 1
      const word = line.slice(i, j)
      result += KEYWORDS.has(word) ? keyword(word) : word
      i = j
      continue
    }
    result += c
    i += 1
  }
  return result
}
