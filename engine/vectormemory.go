package engine

import "github.com/praxis-os/continuity/vectors"

// VectorMemoryMiB is how many MiB of int8 vector codes a vector space
// keeps in memory (vectors.MemoryCodes: past it, the codes of the other
// exchanges are read from the index for the candidates a search scores,
// with the same results).
func VectorMemoryMiB() int { return vectors.MemoryCodes >> 20 }

// SetVectorMemoryMiB sets VectorMemoryMiB for the spaces loaded from now
// on (daemon --vector-memory).
func SetVectorMemoryMiB(mib int) { vectors.MemoryCodes = mib << 20 }
