export * from "./McpProcess.js"
export * from "./RepoPaths.js"
export * from "./TempTree.js"
export * from "./ToolText.js"
