// The parts of pi-tui the first frame needs (the screen, the editor, the terminal, the keys, the
// text measures), imported from their own files rather than the package's index: the index brings
// in everything else too (Markdown, marked, LaTeX, images), which cost the launch tens of
// milliseconds before the editor could show (bench/README.md, "interactive UI"). The rest of the UI
// loads after the first frame and may import the index.
export { Editor } from "@earendil-works/pi-tui/dist/components/editor.js"
export { matchesKey } from "@earendil-works/pi-tui/dist/keys.js"
export { ProcessTerminal, type Terminal } from "@earendil-works/pi-tui/dist/terminal.js"
export { type Component, Container, type TUI } from "@earendil-works/pi-tui/dist/tui.js"
export { TuiMainScreen } from "@earendil-works/pi-tui/dist/tui-main-screen.js"
export { truncateToWidth, visibleWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui/dist/utils.js"
