package cli

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// servePprof serves Go's runtime profiles on addr (checked to be loopback
// by the caller) until stop is called, and returns the address it bound.
// Mutex and blocking profiles are on meanwhile; stop turns them off again.
// `go tool pprof http://ADDR/debug/pprof/profile` profiles the gateway
// alone, as it runs.
func servePprof(ctx context.Context, addr string, log *slog.Logger) (bound string, stop func(), err error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	runtime.SetMutexProfileFraction(100)
	runtime.SetBlockProfileRate(int(10 * time.Microsecond))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("pprof server ended", "err", err)
		}
	}()
	return ln.Addr().String(), func() {
		srv.Close()
		<-done
		runtime.SetMutexProfileFraction(0)
		runtime.SetBlockProfileRate(0)
	}, nil
}
