package main

import (
	"flag"
	"fmt"

	"github.com/parley-chat/parley/web"
)

// minMetricsToken is the shortest metrics token accepted: /metrics limits no attempts, so
// the token must be too long to guess.
const minMetricsToken = 16

// metricsFlag declares --metrics, whose default is token when PARLEY_METRICS_TOKEN is set,
// off otherwise; setMetrics applies it once the flags are parsed.
func metricsFlag(fs *flag.FlagSet, cfg *Config, getenv func(string) string) *string {
	cfg.Metrics.Token = getenv("PARLEY_METRICS_TOKEN")
	def := "off"
	if cfg.Metrics.Token != "" {
		def = "token"
	}
	return fs.String("metrics", envOr(getenv, "PARLEY_METRICS", def),
		"GET /metrics for Prometheus: off, token (to requests bearing PARLEY_METRICS_TOKEN) or open (to anyone who can reach Parley) (PARLEY_METRICS)")
}

// setMetrics sets who may read /metrics from the --metrics mode.
func setMetrics(cfg *Config, mode string) error {
	switch mode {
	case "off":
		cfg.Metrics = web.MetricsOptions{}
	case "token":
		if len(cfg.Metrics.Token) < minMetricsToken {
			return fmt.Errorf("--metrics token needs PARLEY_METRICS_TOKEN, of %d characters or more (openssl rand -hex 32 makes one): the bearer token the scraper sends", minMetricsToken)
		}
	case "open":
		if cfg.Metrics.Token != "" {
			return fmt.Errorf("--metrics open serves /metrics to anyone, without PARLEY_METRICS_TOKEN: unset it, or use --metrics token")
		}
		cfg.Metrics.Open = true
	default:
		return fmt.Errorf("--metrics %q: use off, token or open", mode)
	}
	return nil
}
