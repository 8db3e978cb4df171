// Package docs holds no code: its tests keep the repository's documents
// honest. They check the size limits of README.md and protocol.md, that
// every relative link of the documents leads to a file (and heading) that
// exists, and that the package picture of docs/architecture.md is the one
// `go list` gives.
package docs
