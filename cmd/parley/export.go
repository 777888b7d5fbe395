package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/parley-chat/parley/backend/builtin"
	"github.com/parley-chat/parley/config"
	"github.com/parley-chat/parley/eval"
)

// runExport is `parley export --jsonl`: the conversations as data to evaluate agents with,
// one line a version of each (see docs/eval.md), on standard output.
func runExport(ctx context.Context, args []string, getenv func(string) string, std stdio) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(std.err)
	dbPath := fs.String("db", envOr(getenv, "PARLEY_DB", "./parley.db"), "SQLite database file or postgres:// URL (PARLEY_DB)")
	configFile := fs.String("config", envOr(getenv, "PARLEY_CONFIG", ""), "agents config file, TOML (PARLEY_CONFIG): names each agent's back end")
	jsonl := fs.Bool("jsonl", false, "write JSON Lines for evaluation (the only format)")
	since := fs.String("since", "", "only conversations active since DATE (2006-01-02, or RFC 3339)")
	var f eval.Filter
	fs.StringVar(&f.Agent, "agent", "", "only this agent's conversations")
	fs.StringVar(&f.Label, "label", "", "only conversations staff put this label on")
	fs.BoolVar(&f.WithNotes, "with-notes", false, "add staff's notes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !*jsonl {
		return fmt.Errorf("parley export: say the format, --jsonl")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("parley export: unexpected argument %q", fs.Arg(0))
	}
	if *since != "" {
		t, err := time.Parse("2006-01-02", *since)
		if err != nil {
			if t, err = time.Parse(time.RFC3339, *since); err != nil {
				return fmt.Errorf("parley export: --since %q: a date (2006-01-02) or a time (RFC 3339)", *since)
			}
		}
		f.Since = t
	}
	backends, err := agentBackends(*configFile, getenv)
	if err != nil {
		return err
	}
	db, err := openForCommand(ctx, *dbPath, "export")
	if err != nil {
		return err
	}
	defer db.Close()
	w := bufio.NewWriterSize(std.out, 64<<10)
	n, err := eval.Write(ctx, w, db, f, backends)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(std.err, "parley export: %d lines\n", n)
	return nil
}

// agentBackends names each agent of the config file's, and Parley's own, by its back end.
func agentBackends(configFile string, getenv func(string) string) (func(string) string, error) {
	cfgs, _, err := config.LoadAgents(configFile, getenv)
	if err != nil {
		return nil, err
	}
	return backendsOf(cfgs), nil
}

// backendsOf names each agent's back end: builtin for Parley's own, the config's for the
// others, unknown for an agent no longer configured.
func backendsOf(cfgs []config.AgentConfig) func(string) string {
	kinds := map[string]string{}
	for _, a := range builtin.All(builtin.Options{}) {
		kinds[a.Info().Name] = "builtin"
	}
	for _, c := range cfgs {
		kinds[c.Name] = c.Backend
	}
	return func(agent string) string {
		if k, ok := kinds[agent]; ok {
			return k
		}
		return "unknown"
	}
}
