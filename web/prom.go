package web

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Parley writes its metrics in Prometheus's text format (version 0.0.4) itself: counters,
// gauges and histograms are a few lines each. Prometheus's client library would link
// protobuf for an exposition format no scraper needs from Parley, and protobuf's reflection
// keeps every exported method of every type in the binary.

// promContentType is the content type of the text format.
const promContentType = "text/plain; version=0.0.4; charset=utf-8"

// counter counts up by one.
type counter struct{ n atomic.Uint64 }

// Inc adds one.
func (c *counter) Inc() { c.n.Add(1) }

func (c *counter) value() float64 { return float64(c.n.Load()) }

// gauge goes up and down by one.
type gauge struct{ n atomic.Int64 }

// Inc adds one.
func (g *gauge) Inc() { g.n.Add(1) }

// Dec takes one away.
func (g *gauge) Dec() { g.n.Add(-1) }

func (g *gauge) value() float64 { return float64(g.n.Load()) }

// histogram counts observations in buckets of upper bounds.
type histogram struct {
	bounds []float64
	mu     sync.Mutex
	counts []uint64 // by bucket, not cumulative; the last is above every bound
	sum    float64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

// Observe counts v.
func (h *histogram) Observe(v float64) {
	i := len(h.bounds)
	for j, b := range h.bounds {
		if v <= b {
			i = j
			break
		}
	}
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.mu.Unlock()
}

// expo is a scrape's text, written family by family.
type expo struct{ bytes.Buffer }

// family starts a metric family: its help and its type.
func (e *expo) family(name, typ, help string) {
	e.WriteString("# HELP " + name + " " + strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(help) + "\n")
	e.WriteString("# TYPE " + name + " " + typ + "\n")
}

// sample writes one sample; labels are name, value pairs.
func (e *expo) sample(name string, v float64, labels ...string) {
	e.WriteString(name)
	if len(labels) > 0 {
		e.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				e.WriteByte(',')
			}
			e.WriteString(labels[i] + `="` + strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(labels[i+1]) + `"`)
		}
		e.WriteByte('}')
	}
	e.WriteByte(' ')
	e.WriteString(promFloat(v))
	e.WriteByte('\n')
}

// one writes a family of a single sample.
func (e *expo) one(name, typ, help string, v float64) {
	e.family(name, typ, help)
	e.sample(name, v)
}

// histogram writes a histogram family.
func (e *expo) histogram(name, help string, h *histogram) {
	h.mu.Lock()
	counts, sum := append([]uint64(nil), h.counts...), h.sum
	h.mu.Unlock()
	e.family(name, "histogram", help)
	var n uint64
	for i, b := range h.bounds {
		n += counts[i]
		e.sample(name+"_bucket", float64(n), "le", promFloat(b))
	}
	n += counts[len(h.bounds)]
	e.sample(name+"_bucket", float64(n), "le", "+Inf")
	e.sample(name+"_sum", sum)
	e.sample(name+"_count", float64(n))
}

// promFloat writes a value as Prometheus's own client does.
func promFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
