package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
)

// watchReload reloads the configuration on SIGHUP and, with --watch, when
// the file changes, until ctx ends. An invalid file keeps the running
// configuration and says why.
func (r *run) watchReload(ctx context.Context, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var tick <-chan time.Time
	var last [3]fileStamp
	if r.serve.watch {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
		last = r.watchedStamps()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		case <-tick:
			now := r.watchedStamps()
			if now == last {
				continue
			}
			last = now
		}
		r.reload(ctx, log)
	}
}

// reload loads the configuration again and swaps it in.
func (r *run) reload(ctx context.Context, log *slog.Logger) {
	cfg, err := r.loadConfig()
	if err == nil {
		err = r.host.Reload(ctx, cfg)
	}
	if err != nil {
		fmt.Fprintf(r.env.Stderr, "switchboard: configuration not reloaded, the running one stays: %s\n", launcher.Escape(err.Error()))
		return
	}
	if r.storeURL == "" && cfg.Store != r.cfg.Store {
		fmt.Fprintf(r.env.Stderr, "switchboard: warning: the \"store\" setting changed; the store in use stays until the next start\n")
	}
	r.cfg = cfg
	if g := r.gateway.Load(); g != nil {
		g.Sync()
	}
	fmt.Fprintf(r.env.Stderr, "switchboard: configuration reloaded from %s: %s\n", launcher.Escape(cfg.Source), summary(r.host))
	log.Info("configuration reloaded", "source", cfg.Source)
}

// watchedStamps stamps the files serve --watch watches: the configuration
// file, and unless --no-project the working directory's project file and
// the record of trusted project files, so that a project server starts
// once trust-project has approved its file.
func (r *run) watchedStamps() [3]fileStamp {
	var st [3]fileStamp
	if r.cfg.Source != config.DefaultSource {
		st[0] = stampOf(r.cfg.Source)
	}
	if r.noProject {
		return st
	}
	st[1] = stampOf(filepath.Join(r.env.Dir, config.ProjectFileName))
	if home, err := r.homeDir(); err == nil {
		st[2] = stampOf(filepath.Join(home, config.TrustFileName))
	}
	return st
}

// fileStamp notices a changed file without reading it.
type fileStamp struct {
	size int64
	mod  time.Time
}

func stampOf(path string) fileStamp {
	st, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{st.Size(), st.ModTime()}
}
