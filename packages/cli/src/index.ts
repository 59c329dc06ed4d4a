export { alisio, cli } from "./main.js"
