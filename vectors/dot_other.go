//go:build !amd64

package vectors

// dotsInt16Int8 sets out[i] to the dot product of q and the i-th vector of
// b (len(q) components each), for i < len(out).
func dotsInt16Int8(q []int16, b []int8, out []int32) { dotsInt16Int8Go(q, b, out) }
