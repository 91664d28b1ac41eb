// Command server is a small MCP server written with Switchboard's server
// package: a tool with typed arguments and result, a resource, a family of
// resources and a prompt, served over stdio (the default, for a client that
// launches it) or over Streamable HTTP (-http ADDR), to clients of both
// protocol eras.
//
//	go run .                        # stdio
//	go run . -http 127.0.0.1:8080   # http://127.0.0.1:8080/mcp
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/server"
)

// ForecastIn are the arguments of get_forecast; the tags give the names
// and the descriptions that reach the model.
type ForecastIn struct {
	City string `json:"city" jsonschema:"the city, e.g. Lisbon"`
	Days int    `json:"days,omitempty" jsonschema:"how many days ahead, 1 to 7; default 1"`
}

// Forecast is get_forecast's declared result: advertised as its output
// schema and sent as structured content.
type Forecast struct {
	City  string    `json:"city"`
	HighC []float64 `json:"highC"`
}

// GetForecast is a tool: its name, get_forecast, comes from the function.
func GetForecast(ctx context.Context, in ForecastIn) (Forecast, error) {
	days := in.Days
	if days == 0 {
		days = 1
	}
	if days < 1 || days > 7 {
		// An ordinary error: the model reads it and can call again.
		return Forecast{}, fmt.Errorf("days must be 1 to 7, not %d", in.Days)
	}
	f := Forecast{City: in.City}
	for d := range days {
		f.HighC = append(f.HighC, 18+float64((len(in.City)+d)%7))
	}
	if p := server.ProgressReporter(ctx); p != nil {
		p.Report(1, 1, "forecast ready") //nolint:errcheck // best effort
	}
	return f, nil
}

// CityVars are the variables of the weather://cities/{name} template.
type CityVars struct {
	Name string `json:"name"`
}

// newServer builds the server.
func newServer() *server.Server {
	s := server.New("weather", "1.0.0", &server.Options{Instructions: "Forecasts for any city."})
	server.MustAddTool(s, server.Tool{Description: "Forecast of the daily high temperature for a city."}, GetForecast)
	if err := s.AddResource(server.Resource{URI: "weather://readme", Name: "readme", Description: "How to use this server."},
		func(context.Context) (*server.Contents, error) {
			return &server.Contents{Text: "Ask get_forecast for a city's forecast."}, nil
		}); err != nil {
		panic(err)
	}
	if err := server.AddTemplate(s, server.ResourceTemplate{URITemplate: "weather://cities/{name}", Name: "city"},
		func(_ context.Context, _ string, v CityVars) (*server.Contents, error) {
			if strings.TrimSpace(v.Name) == "" {
				return nil, nil // not found
			}
			return &server.Contents{Text: v.Name + ": a city with weather."}, nil
		}); err != nil {
		panic(err)
	}
	server.MustAddPrompt(s, server.Prompt{Name: "plan_trip", Description: "Plan a trip."},
		func(ctx context.Context, a struct {
			City string `json:"city" jsonschema:"where to"`
		}) ([]*mcp.PromptMessage, error) {
			server.SetPromptDescription(ctx, "Plan a trip to "+a.City)
			return []*mcp.PromptMessage{server.UserText("Plan a three-day trip to " + a.City + ", with the forecast in mind.")}, nil
		})
	return s
}

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP on `ADDR` (host:port) at /mcp instead of stdio")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := newServer()
	var err error
	if *addr == "" {
		err = s.ServeStdio(ctx)
	} else {
		err = s.ListenAndServe(ctx, *addr, func(a net.Addr) {
			fmt.Fprintf(os.Stderr, "serving http://%s/mcp\n", a)
		})
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
