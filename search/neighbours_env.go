package search

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// EnvNeighbours turns the neighbour context on (neighbours.go), off by
// default because it did not win on the evaluation sets: "L" or "L,V",
// the weights NeighbourLexical and NeighbourVector (0 to 1; V defaults to
// L). It applies to every Searcher whose Options set neither weight: the
// daemon's, the CLI's and resume's. An experiment's switch, not a setting.
const EnvNeighbours = "CONTINUITY_SEARCH_NEIGHBOURS"

// neighboursFromEnv returns the weights $CONTINUITY_SEARCH_NEIGHBOURS
// sets, ok false when it is unset or empty.
func neighboursFromEnv() (lw, vw float64, ok bool, err error) {
	v := strings.TrimSpace(os.Getenv(EnvNeighbours))
	if v == "" {
		return 0, 0, false, nil
	}
	parts := strings.Split(v, ",")
	if len(parts) > 2 {
		return 0, 0, false, fmt.Errorf("$%s=%q: want L or L,V (weights 0 to 1)", EnvNeighbours, v)
	}
	var ws [2]float64
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f < 0 || f > 1 {
			return 0, 0, false, fmt.Errorf("$%s=%q: want L or L,V (weights 0 to 1)", EnvNeighbours, v)
		}
		ws[i] = f
	}
	if len(parts) == 1 {
		ws[1] = ws[0]
	}
	return ws[0], ws[1], true, nil
}

// withNeighboursFromEnv sets o's neighbour weights from the environment
// when o sets neither (a weight of 0 there turns that side off).
func withNeighboursFromEnv(o Options) (Options, error) {
	if o.NeighbourLexical != 0 || o.NeighbourVector != 0 {
		return o, nil
	}
	lw, vw, ok, err := neighboursFromEnv()
	if err != nil || !ok {
		return o, err
	}
	o.NeighbourLexical, o.NeighbourVector = -1, -1
	if lw > 0 {
		o.NeighbourLexical = lw
	}
	if vw > 0 {
		o.NeighbourVector = vw
	}
	return o, nil
}
