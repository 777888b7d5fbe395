package web

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"
)

// writeGoMetrics writes the Go runtime's go_* metrics, by the names and with the meanings
// Prometheus's Go client gives them, so that the usual dashboards read them.
func writeGoMetrics(e *expo) {
	gc := debug.GCStats{PauseQuantiles: make([]time.Duration, 5)}
	debug.ReadGCStats(&gc)
	e.family("go_gc_duration_seconds", "summary", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.")
	for i, q := range []string{"0", "0.25", "0.5", "0.75", "1"} {
		e.sample("go_gc_duration_seconds", gc.PauseQuantiles[i].Seconds(), "quantile", q)
	}
	e.sample("go_gc_duration_seconds_sum", gc.PauseTotal.Seconds())
	e.sample("go_gc_duration_seconds_count", float64(gc.NumGC))

	rm := []rtmetrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}, {Name: "/sched/gomaxprocs:threads"}}
	rtmetrics.Read(rm)
	e.one("go_gc_gogc_percent", "gauge", "Heap size target percentage configured by the user, otherwise 100.", float64(rm[0].Value.Uint64()))
	e.one("go_gc_gomemlimit_bytes", "gauge", "Go runtime memory limit configured by the user, otherwise math.MaxInt64.", float64(rm[1].Value.Uint64()))
	e.one("go_goroutines", "gauge", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine()))
	e.family("go_info", "gauge", "Information about the Go environment.")
	e.sample("go_info", 1, "version", runtime.Version())

	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	for _, s := range []struct {
		name, typ, help string
		v               float64
	}{
		{"alloc_bytes", "gauge", "Number of bytes allocated in heap and currently in use.", float64(m.Alloc)},
		{"alloc_bytes_total", "counter", "Total number of bytes allocated in heap until now, even if released already.", float64(m.TotalAlloc)},
		{"buck_hash_sys_bytes", "gauge", "Number of bytes used by the profiling bucket hash table.", float64(m.BuckHashSys)},
		{"frees_total", "counter", "Total number of heap objects frees.", float64(m.Frees)},
		{"gc_sys_bytes", "gauge", "Number of bytes used for garbage collection system metadata.", float64(m.GCSys)},
		{"heap_alloc_bytes", "gauge", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes.", float64(m.HeapAlloc)},
		{"heap_idle_bytes", "gauge", "Number of heap bytes waiting to be used.", float64(m.HeapIdle)},
		{"heap_inuse_bytes", "gauge", "Number of heap bytes that are in use.", float64(m.HeapInuse)},
		{"heap_objects", "gauge", "Number of currently allocated objects.", float64(m.HeapObjects)},
		{"heap_released_bytes", "gauge", "Number of heap bytes released to OS.", float64(m.HeapReleased)},
		{"heap_sys_bytes", "gauge", "Number of heap bytes obtained from system.", float64(m.HeapSys)},
		{"last_gc_time_seconds", "gauge", "Number of seconds since 1970 of last garbage collection.", float64(m.LastGC) / 1e9},
		{"mallocs_total", "counter", "Total number of heap objects allocated, both live and gc-ed.", float64(m.Mallocs)},
		{"mcache_inuse_bytes", "gauge", "Number of bytes in use by mcache structures.", float64(m.MCacheInuse)},
		{"mcache_sys_bytes", "gauge", "Number of bytes used for mcache structures obtained from system.", float64(m.MCacheSys)},
		{"mspan_inuse_bytes", "gauge", "Number of bytes in use by mspan structures.", float64(m.MSpanInuse)},
		{"mspan_sys_bytes", "gauge", "Number of bytes used for mspan structures obtained from system.", float64(m.MSpanSys)},
		{"next_gc_bytes", "gauge", "Number of heap bytes when next garbage collection will take place.", float64(m.NextGC)},
		{"other_sys_bytes", "gauge", "Number of bytes used for other system allocations.", float64(m.OtherSys)},
		{"stack_inuse_bytes", "gauge", "Number of bytes obtained from system for stack allocator in non-CGO environments.", float64(m.StackInuse)},
		{"stack_sys_bytes", "gauge", "Number of bytes obtained from system for stack allocator.", float64(m.StackSys)},
		{"sys_bytes", "gauge", "Number of bytes obtained from system.", float64(m.Sys)},
	} {
		e.one("go_memstats_"+s.name, s.typ, s.help, s.v)
	}
	e.one("go_sched_gomaxprocs_threads", "gauge", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously.", float64(rm[2].Value.Uint64()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	e.one("go_threads", "gauge", "Number of OS threads created.", float64(threads))
}

// userHZ is the unit of the CPU times in /proc (sysconf(_SC_CLK_TCK), 100 on Linux).
const userHZ = 100

// writeProcessMetrics writes the process's process_* metrics from /proc, as Prometheus's
// process collector does; on a system without /proc it writes those it can.
func writeProcessMetrics(e *expo) {
	type metric struct {
		name, typ, help string
		v               float64
	}
	var ms []metric
	one := func(name, typ, help string, v float64) { ms = append(ms, metric{name, typ, help, v}) }
	defer func() {
		slices.SortFunc(ms, func(a, b metric) int { return strings.Compare(a.name, b.name) })
		for _, m := range ms {
			e.one(m.name, m.typ, m.help, m.v)
		}
	}()
	if stat, err := os.ReadFile("/proc/self/stat"); err == nil {
		// The fields after the command, which is in parentheses and may hold spaces.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 21 {
			num := func(i int) float64 { v, _ := strconv.ParseFloat(f[i], 64); return v }
			one("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.", (num(11)+num(12))/userHZ)
			if boot := bootTime(); boot > 0 {
				one("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.", boot+num(19)/userHZ)
			}
			one("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", num(20))
			one("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.", num(21)*float64(os.Getpagesize()))
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		one("process_open_fds", "gauge", "Number of open file descriptors.", float64(len(fds)))
	}
	if limits, err := os.ReadFile("/proc/self/limits"); err == nil {
		if v, ok := softLimit(string(limits), "Max open files"); ok {
			one("process_max_fds", "gauge", "Maximum number of open file descriptors.", v)
		}
		if v, ok := softLimit(string(limits), "Max address space"); ok {
			one("process_virtual_memory_max_bytes", "gauge", "Maximum amount of virtual memory available in bytes.", v)
		}
	}
	if in, out, ok := netOctets(); ok {
		one("process_network_receive_bytes_total", "counter", "Number of bytes received by the process over the network.", in)
		one("process_network_transmit_bytes_total", "counter", "Number of bytes sent by the process over the network.", out)
	}
}

// bootTime is when the system started, in seconds since 1970 (btime in /proc/stat).
func bootTime() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			t, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return t
		}
	}
	return 0
}

// softLimit reads the soft limit of a line of /proc/self/limits; unlimited is the largest
// 64-bit number, as Prometheus's process collector has it.
func softLimit(limits, name string) (float64, bool) {
	for line := range strings.Lines(limits) {
		if rest, ok := strings.CutPrefix(line, name); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			if f[0] == "unlimited" {
				return float64(^uint64(0)), true
			}
			v, err := strconv.ParseFloat(f[0], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// netOctets reads the bytes received and sent over IP (InOctets and OutOctets of IpExt in
// /proc/self/net/netstat: the process's network namespace).
func netOctets() (in, out float64, ok bool) {
	b, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	var names []string
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "IpExt:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i := 1; i < len(f) && i < len(names); i++ {
			v, _ := strconv.ParseFloat(f[i], 64)
			switch names[i] {
			case "InOctets":
				in, ok = v, true
			case "OutOctets":
				out = v
			}
		}
		return in, out, ok
	}
	return 0, 0, false
}
