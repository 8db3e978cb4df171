package engine

// Version is continuity's release. The daemon tells it in its ping,
// doctor compares it with the running daemon's, MCP clients see it.
const Version = "0.1.0"
