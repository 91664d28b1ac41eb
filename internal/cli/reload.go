package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/launcher"
	"github.com/switchboard-mcp/switchboard/internal/store"
)

// watchReload reloads the configuration on SIGHUP; with --watch (the
// default) when its file, the credential store, the working directory's
// project file or the project approvals change (the configuration file in
// use, or the home's config.json when the embedded default is in use: a
// file created there is loaded); and when another process sharing the
// store reloaded its own (the store's change feed, store.TopicConfig),
// until ctx ends. Each process reads its own file: a notice makes it
// re-read that file, it does not carry a configuration. An invalid file
// keeps the running configuration and says why.
//
// It takes SIGHUP and the files' stamps before it returns, so that what
// comes after it is seen, and returns the loop that watches, to run in a
// goroutine.
func (r *server) watchReload(ctx context.Context, log *slog.Logger) (loop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	var tick <-chan time.Time
	var watched []string
	stopTick := func() {}
	if r.serve.watch {
		watched = r.watchedFiles()
		t := time.NewTicker(time.Second)
		stopTick, tick = t.Stop, t.C
	}
	last := stampsOf(watched)
	var notices <-chan store.Change
	if n, ok := r.store.(store.Notifier); ok {
		var err error
		if notices, err = n.Listen(ctx, store.TopicConfig); err != nil {
			log.Warn("reloads of other replicas will not be followed: the store's change feed is unavailable", "err", err)
		}
	}
	return func() {
		defer signal.Stop(hup)
		defer stopTick()
		if feed := notices; feed != nil {
			// Until the feed's goroutine has closed its connection.
			defer func() {
				for range feed {
				}
			}()
		}
		for {
			announce := true
			var asked chan struct{} // closed once the reload asked for is done
			select {
			case <-ctx.Done():
				return
			case asked = <-r.reloadAsk:
				last = stampsOf(watched) // the change asked for is this reload's
			case <-hup:
			case <-tick:
				now := stampsOf(watched)
				if slices.Equal(now, last) {
					continue
				}
				last = now
			case c, ok := <-notices:
				switch {
				case !ok:
					return // the feed ends with ctx
				case c.Missed || c.Payload == r.replica:
					continue
				}
				announce = false // the reload that caused it was announced
			}
			r.reload(ctx, log, announce)
			if asked != nil {
				close(asked)
			}
		}
	}
}

// watchedFiles are the files whose changes --watch reloads on.
func (r *server) watchedFiles() []string {
	var files []string
	if r.cfg.Source != config.DefaultSource {
		files = append(files, r.cfg.Source)
	} else if home, err := r.homeDir(); err == nil {
		files = append(files, filepath.Join(home, config.FileName))
	}
	if p, err := r.credsPath(); err == nil {
		files = append(files, p)
	}
	if !r.noProject {
		// The working directory's project file, and the approvals that
		// let its servers start (trust-project in another shell).
		files = append(files, filepath.Join(r.env.Dir, config.ProjectFileName))
		if home, err := r.homeDir(); err == nil {
			files = append(files, filepath.Join(home, config.TrustFileName))
		}
	}
	return files
}

func stampsOf(paths []string) []fileStamp {
	out := make([]fileStamp, len(paths))
	for i, p := range paths {
		out[i] = stampOf(p)
	}
	return out
}

// reload loads the configuration again and swaps it in; announce tells the
// other processes sharing the store, which then reload theirs.
func (r *server) reload(ctx context.Context, log *slog.Logger, announce bool) {
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
	if r.oauthChanged(r.cfg, cfg) {
		fmt.Fprintf(r.env.Stderr, "switchboard: warning: the \"gateway.oauth\" setting changed; the gateway goes on accepting the JWTs it accepted until the next start\n")
	}
	if r.publicURLChanged(r.cfg, cfg) {
		fmt.Fprintf(r.env.Stderr, "switchboard: warning: the \"gateway.publicUrl\" setting changed; logins come back to the URL they came back to until the next start\n")
	}
	r.cfg = cfg
	if g := r.gateway.Load(); g != nil {
		g.Sync()
	}
	why := ""
	if !announce {
		why = " (another replica reloaded)"
	}
	fmt.Fprintf(r.env.Stderr, "switchboard: configuration reloaded from %s%s: %s\n", launcher.Escape(cfg.Source), why, summary(r.host))
	log.Info("configuration reloaded", "source", cfg.Source, "announced", announce)
	if n, ok := r.store.(store.Notifier); ok && announce {
		if err := n.Notify(ctx, store.TopicConfig, r.replica); err != nil {
			log.Warn("the other replicas were not told of the reload", "err", err)
		}
	}
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
