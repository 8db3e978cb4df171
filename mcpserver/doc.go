// Package mcpserver is the MCP server of `continuity mcp`: its tools and
// how they call the engine (tools.go), the workspace it serves, known at
// once or from the client's roots (workspace.go), the in-process indexer
// it runs while no daemon does (serve.go), the tools' answers as a model
// reads them (answers.go: the structured results, the words beside them,
// the engine's errors phrased with the tools' argument names) and the
// stdio transport that answers a malformed line with a JSON-RPC error
// and keeps serving (stdio.go). The command only reads its flags and
// calls Serve.
package mcpserver
