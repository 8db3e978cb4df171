// Package mcpserver holds what the MCP server of `continuity mcp` says
// and how it reads its stdin, apart from the binary's wiring of the tools
// to the engine: the tools' answers as a model reads them (answers.go:
// the structured results, the words beside them, the errors) and the
// stdio transport that answers a malformed line with a JSON-RPC error
// and keeps serving (stdio.go).
package mcpserver
